package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// One clock per request: with default flags on Linux a response's end is
// the kernel stamp of the read that ended it, like its chunks. The
// simulator writes its usage chunk and [DONE] together, so one read brings
// both and every response ends exactly at its last chunk's time, where the
// end used to be the user-space time after the client had handled that
// read (always later). The header names each field's source, and trace
// info says where ends lie.
func TestResponseEndOnTheChunksClock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	bin := parallelBinary(t)
	_, _, tr := replaySim(t, bin, []string{"--profile", "fast", "--token-interval", "2ms"}, "--max-tokens", "16", "--schedule", "burst:4", "--repeats", "2")
	h, recs := readTrace(t, tr)
	checkKernelStamped(t, h, recs, false)
	for _, f := range []string{trace.FieldHeaders, trace.FieldChunk, trace.FieldDone} {
		if h.TimeSources[f] != trace.TimestampsKernel {
			t.Errorf("time_sources %v: %s is not kernel", h.TimeSources, f)
		}
	}
	if h.TimeSources[trace.FieldSent] != trace.TimestampsUser {
		t.Errorf("time_sources %v: the send is the client's own act", h.TimeSources)
	}
	for _, rec := range recs {
		n := len(rec.Chunks)
		if rec.Error != nil || n == 0 {
			continue
		}
		if last := rec.Chunks[n-1]; last.Text != "" || rec.Done != last.T {
			t.Errorf("%s ends at %d, its last chunk (%q) at %d: want the usage chunk's read, which brought [DONE]", rec.ID, rec.Done, last.Text, last.T)
		}
	}
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	if !strings.Contains(info, "ends:       a response's end came 0s after its last chunk on average, 0s at most (8 responses; the end is the kernel stamp of the read that ended the response)") {
		t.Errorf("trace info does not say where ends lie:\n%s", info)
	}
	out, e, code := run(t, nil, bin, "analyze", tr, "--format", "json")
	if code != 0 || strings.Contains(out+e, "done_user_time") {
		t.Errorf("analyze exit %d, or done_user_time on a 1.6 trace: %s\n%s", code, e, out)
	}
}
