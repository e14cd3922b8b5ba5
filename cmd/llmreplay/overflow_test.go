package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestHostileCountsDoNotCrashAnalysis: issue #11 finding 4 through the
// binary. Per-chunk counts of ±9e18 overflowed a distribution's count and
// panicked in analyze and check (makeslice: len out of range), and
// usage.completion_tokens of 9e18 gave aggregate_tps = -1.1e20. Now the
// counts are not used, the text is counted, and the warning says so.
func TestHostileCountsDoNotCrashAnalysis(t *testing.T) {
	bin := parallelBinary(t)
	path := filepath.Join(t.TempDir(), "hostile.trace.zst")
	w, err := trace.Create(path, trace.Header{
		Label: "hostile", Model: "m", API: "openai-chat",
		Phases: []trace.Phase{{Index: 0, Name: "burst-c1", Kind: "burst", Concurrency: 1, MaxTokens: 16, Requests: 6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		rec := trace.Record{ID: fmt.Sprintf("r%d", i), Index: i, MaxTokens: 16, Sent: int64(i) * 1e9, Headers: int64(i)*1e9 + 1e7, Status: 200, FinishReason: "length"}
		for j := 0; j < 16; j++ {
			c := trace.Chunk{T: int64(i)*1e9 + 2e7 + int64(j)*1e7, Bytes: 60, Text: fmt.Sprintf("%d, ", j+1)}
			switch i % 3 {
			case 0:
				c.Tokens = 9_000_000_000_000_000_000 // summing two overflows int64
			case 1:
				c.Tokens = -9_000_000_000_000_000_000 + j
			}
			rec.Chunks = append(rec.Chunks, c)
		}
		if i%3 == 2 {
			rec.Usage = `{"completion_tokens":9000000000000000000,"prompt_tokens":10}`
		}
		rec.Done = rec.Chunks[len(rec.Chunks)-1].T + 1e6
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"analyze", path},
		{"analyze", "--format", "json", path},
		{"check", path, "--claim", "per_stream_tps{concurrency=1} >= 1"},
	} {
		o, e, code := run(t, nil, bin, args...)
		if strings.Contains(e, "panic") || (code != 0 && code != 1) {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, o, e)
		}
		if args[0] == "analyze" && !strings.Contains(o+e, "usage_implausible") {
			t.Errorf("%v does not warn usage_implausible:\n%s\n%s", args, o, e)
		}
		if strings.Contains(o, "e+1") || strings.Contains(o, "-1.1e") {
			t.Errorf("%v shows an absurd figure:\n%s", args, o)
		}
	}
}
