package analyze

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

// kernelHeader is a 1.minor header of a run with kernel stamps: from 1.6
// every arrival time is a stamp, before it the response's end was not.
func kernelHeader(minor int) trace.Header {
	h := header("K", phase(0, 2, 100, 7, 0))
	h.Minor, h.Timestamps = minor, trace.TimestampsKernel
	if minor >= 6 {
		h.TimeSources = map[string]string{trace.FieldScheduled: trace.TimestampsUser, trace.FieldSent: trace.TimestampsUser,
			trace.FieldHeaders: trace.TimestampsKernel, trace.FieldChunk: trace.TimestampsKernel, trace.FieldDone: trace.TimestampsKernel}
	}
	return h
}

// lateRecords are two requests worked by hand. a, sent at 0 with its
// headers read at 50 ms: its first two chunks came in one read at 100 ms
// (the first read late: it arrived between 50 and 100 ms), then 110, then
// 120 in a read that returned after the next chunk had arrived (read late,
// its time its own), then 130, where the stream's end came too. b is read
// on time, every 10 ms from 300 ms, and ends 10 ms after its last chunk.
func lateRecords() []trace.Record {
	a := okRecord("a", 0, 0)
	a.Headers = 50 * msNs
	a.Chunks = []trace.Chunk{chunk(100, "1", 0), chunk(100, ",", 0), chunk(110, " 2", 0), chunk(120, ",", 0), chunk(130, " 3", 0)}
	a.Chunks[0].ReadLate, a.Chunks[3].ReadLate = true, true
	a.ReadLate, a.ReadLateMax = 2, 50*msNs
	a.Done = 130 * msNs
	b := okRecord("b", 0, 200)
	b.Headers = 250 * msNs
	return []trace.Record{a, b}
}

// TestClientFellBehind works client_fell_behind out by hand on
// lateRecords. 2 of the 10 content chunks were read late, in 1 request,
// the worst by up to 50 ms (a's first chunk: 100 − 50). ITL leaves out 2
// gaps: the 0 between a's first two chunks (one read) and the 10 ms into
// its fourth (read late); it keeps a's 110 − 100 and 130 − 120 and b's
// four 10 ms gaps: itl_chunk has 6 samples, all 10 ms, where without the
// marks it would have 8 with a 0. a's TTFT stays 100 ms, an upper bound at
// most 100 − 50 = 50 ms above its arrival; b's is 100 ms.
func TestClientFellBehind(t *testing.T) {
	res := analyzeTraces(t, Options{}, testTrace{h: kernelHeader(6), records: lateRecords()})
	w := hasWarning(res.Warnings, WarnClientFellBehind)
	if w == nil {
		t.Fatalf("no client_fell_behind: %+v", res.Warnings)
	}
	testutil.Contains(t, "message", w.Message, "read 2 of 10 chunks (20.00%, in 1 request) late", "the worst by up to 50ms (a)",
		"ITL leaves out the 2 gaps", "the TTFT of 1 request whose first chunk was read late is an upper bound, at most 50ms above the arrival")
	if w.Evidence["chunks_read_late"] != 2 || w.Evidence["itl_gaps_left_out"] != 2 || w.Evidence["worst_delay_ns"] != 50*msNs || w.Evidence["ttft_bound_ns"] != 50*msNs {
		t.Errorf("evidence %v", w.Evidence)
	}
	if d := hasWarning(res.Warnings, WarnDoneUserTime); d != nil {
		t.Errorf("done_user_time on a 1.6 trace: %+v", d)
	}
	g := res.Groups([]string{KeyConcurrency})[0]
	if n := g.Values["itl_chunk"].N; n != 6 {
		t.Errorf("itl_chunk has %d samples, want 6", n)
	}
	wantValues(t, g, map[string]float64{"itl_chunk_min": 10, "itl_chunk_max": 10, "ttft_min": 100, "ttft_max": 100})

	// The same requests unmarked (a trace with user-space times): every
	// gap counts, the 0 too, and nothing is said.
	recs := lateRecords()
	for i := range recs {
		recs[i].ReadLate, recs[i].ReadLateMax = 0, 0
		for k := range recs[i].Chunks {
			recs[i].Chunks[k].ReadLate = false
		}
	}
	res = analyzeTraces(t, Options{}, testTrace{h: header("U", phase(0, 2, 100, 7, 0)), records: recs})
	if w := hasWarning(res.Warnings, WarnClientFellBehind); w != nil {
		t.Errorf("client_fell_behind without marks: %+v", w)
	}
	g = res.Groups([]string{KeyConcurrency})[0]
	if n := g.Values["itl_chunk"].N; n != 8 {
		t.Errorf("unmarked: %d itl_chunk samples, want 8", n)
	}
	wantValues(t, g, map[string]float64{"itl_chunk_min": 0})
}

// TestDoneUserTime: a 1.5 trace with kernel stamps took each response's
// end in user space; the analysis says so once, with how far the ends lay
// after the last chunks: a's 0 (it ended with its last chunk's read) and
// b's 10 ms, 5 ms on average, 10 ms at most, over 2 responses. A 1.5 trace
// with user-space times has both on one clock and says nothing.
func TestDoneUserTime(t *testing.T) {
	res := analyzeTraces(t, Options{}, testTrace{h: kernelHeader(5), records: lateRecords()})
	w := hasWarning(res.Warnings, WarnDoneUserTime)
	if w == nil || !strings.Contains(w.Message, "(format 1.5)") || !strings.Contains(w.Message, "5ms on average, 10ms at most, over 2 responses") {
		t.Fatalf("done_user_time: %+v", w)
	}
	n := 0
	for _, x := range res.Warnings {
		if x.Code == WarnDoneUserTime {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d done_user_time warnings, want one for the trace", n)
	}
	h := header("U", phase(0, 2, 100, 7, 0))
	h.Minor, h.Timestamps = 5, trace.TimestampsUser
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: lateRecords()})
	if w := hasWarning(res.Warnings, WarnDoneUserTime); w != nil {
		t.Errorf("done_user_time on a user-space trace: %+v", w)
	}
}

// TestCutTraceInFlight: a trace cut between two flushes (here after the
// second of four requests was written and the third and fourth sent) is
// partial, and says that 2 requests were in flight, not never sent: 2 of
// 4 in the trace, at least 4 − 2 = 2 in flight, at most 4 − 4 = 0 never
// sent, by the flush at 3 s.
func TestCutTraceInFlight(t *testing.T) {
	h := header("cut", phase(0, 4, 100, 7, 0))
	h.Phases[0].Requests = 4
	var buf bytes.Buffer
	sent := int64(0)
	w, err := trace.NewWriter(&buf, h, trace.WithFlushInterval(0), trace.WithProgress(func() (int64, int64) { return 3_000_000_000, sent }))
	if err != nil {
		t.Fatal(err)
	}
	sent = 4
	for i := range 2 {
		r := okRecord(fmt.Sprintf("r%d", i), 0, float64(i))
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	cut := buf.Len()
	w.Close()
	r, err := trace.NewReader(bytes.NewReader(buf.Bytes()[:cut]))
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AddReader("", "cut.trace.zst", r); err != nil {
		t.Fatal(err)
	}
	res := a.Result()
	p := res.Partial()
	want := "at least 2 were in flight and lost (sent by the last flush, 3s into the run, with no record), at most 0 never sent"
	if len(p) != 1 || !strings.Contains(p[0], "cut off after 2 of 4 requests") || !strings.Contains(p[0], want) {
		t.Errorf("Partial() = %q, want %q", p, want)
	}
}
