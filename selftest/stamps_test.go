package selftest

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestStampSources works section 3's by-source errors out by hand. Request
// a kept its kernel stamps: errors 10 and 30 µs (kernel), 110 and 530 µs
// (user). Request b fell back: its 700 µs counts under user only. A chunk
// without the simulator's send time counts nowhere. Nearest rank over
// sorted errors: kernel p50 10 µs, p99 and max 30 µs; user (110, 530,
// 700 µs) p50 530 µs, p99 and max 700 µs.
func TestStampSources(t *testing.T) {
	us := int64(time.Microsecond)
	a := &trace.Record{ID: "a", Chunks: []trace.Chunk{
		{ServerT: 1000 * us, T: 1010 * us, UserT: 1110 * us},
		{ServerT: 2000 * us, T: 2030 * us, UserT: 2530 * us},
		{T: 2600 * us, UserT: 2700 * us},
	}}
	b := &trace.Record{ID: "b", Notes: "user-space timestamps for this request: a read came without a timestamp control message",
		Chunks: []trace.Chunk{{ServerT: 3000 * us, T: 3700 * us}}}
	got, fellBack := stampSources([]*trace.Record{b, a})
	want := []StampSource{
		{Source: "kernel", Chunks: 2, P50: 10 * time.Microsecond, P99: 30 * time.Microsecond, Max: 30 * time.Microsecond},
		{Source: "user", Chunks: 3, P50: 530 * time.Microsecond, P99: 700 * time.Microsecond, Max: 700 * time.Microsecond},
	}
	if fellBack != 1 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("stampSources = %+v, %d fell back; want %+v, 1", got, fellBack, want)
	}
	var out bytes.Buffer
	writeStampSources(&out, []StampRow{{Run: 2, Streams: 16, TLS: true, Sources: got, FellBack: fellBack}})
	// Every line names its run and transport, as the other sections' rows.
	if s := out.String(); !strings.Contains(s, "run\ttransport\tstreams\tsource") ||
		!strings.Contains(s, "2\tTLS\t16\tkernel\t2\t10µs\t30µs\t30µs") || !strings.Contains(s, "2\tTLS\t16\tuser\t3\t530µs\t700µs\t700µs") ||
		!strings.Contains(s, "2\tTLS\t16\t(1 requests fell back") {
		t.Errorf("table:\n%s", s)
	}

	// User-space times only (--timestamps user, another OS): one source,
	// nothing fell back, and no by-source table.
	c := &trace.Record{ID: "c", Chunks: []trace.Chunk{{ServerT: 1000 * us, T: 1200 * us}}}
	got, fellBack = stampSources([]*trace.Record{c})
	if fellBack != 0 || len(got) != 1 || got[0].Source != "user" || got[0].P50 != 200*time.Microsecond {
		t.Errorf("user only: %+v, %d fell back", got, fellBack)
	}
	out.Reset()
	writeStampSources(&out, []StampRow{{Streams: 16, Sources: got}})
	if out.Len() != 0 {
		t.Errorf("a by-source table for one source:\n%s", out.String())
	}
}

// TestStampVerdicts checks the four timestamp targets on hand-made rows:
// p99 ≤ 0.5 ms at 1,024 aligned streams and ≤ 2 ms at 10,000, each over
// plain HTTP and over TLS, judged apart; a run whose 10,000 streams were
// not all open together did not measure the target and cannot meet it.
func TestStampVerdicts(t *testing.T) {
	ms := time.Millisecond
	noFloor := Floor{Wakeups: 10, P99: 0}
	r := &Result{Runs: []RunInfo{{Run: 1, Floor: noFloor}, {Run: 2, Floor: noFloor}}}
	for run := 1; run <= 2; run++ {
		r.Stamp = append(r.Stamp,
			StampRow{Run: run, Streams: 256, Peak: 256, P99: 9 * ms},                              // not a target's level
			StampRow{Run: run, Streams: 1024, Peak: 1024, P99: 500 * time.Microsecond},            // exactly the bound
			StampRow{Run: run, Streams: 1024, TLS: true, Peak: 1024, P99: 501 * time.Microsecond}, // just above
			StampRow{Run: run, Streams: 10000, Peak: 10000, OpenRate: 1000, P99: 2 * ms},
		)
	}
	// Over TLS at 10,000: run 1 well within 2 ms but only 9,990 open
	// together: its figure counts in the median, the run as missed.
	r.Stamp = append(r.Stamp,
		StampRow{Run: 1, Streams: 10000, TLS: true, Peak: 9990, OpenRate: 1000, P99: ms},
		StampRow{Run: 2, Streams: 10000, TLS: true, Peak: 10000, OpenRate: 1000, P99: ms})
	for _, tc := range []struct{ target, want, runs, fig string }{
		{"timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, loopback", VerdictMet, "2 of 2", "500µs"},
		{"timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, TLS to loopback", VerdictMissed, "0 of 2", "501µs"},
		{"timestamp error p99 ≤ 2 ms at 10,000 streams, loopback", VerdictMet, "2 of 2", "2ms"},
		{"timestamp error p99 ≤ 2 ms at 10,000 streams, TLS to loopback", VerdictMissed, "1 of 2 (1 incomplete)", "1ms"},
	} {
		v := verdictOf(t, r, tc.target)
		if v.Target != tc.target || v.Met != tc.want || v.Runs != tc.runs || v.Figure != tc.fig {
			t.Errorf("%s: got %+v; want %q, %s, median %s", tc.target, v, tc.want, tc.runs, tc.fig)
		}
	}
	// A failed request makes its run miss too.
	r.Stamp[1].Failed = 1
	if v := verdictOf(t, r, "timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, loopback"); v.Met != VerdictMissed || v.Runs != "1 of 2 (1 incomplete)" {
		t.Errorf("a run with a failed request: %+v", v)
	}
	// No run at all: every timestamp target says so.
	for _, v := range (&Result{}).Verdicts() {
		if strings.HasPrefix(v.Target, "timestamp error") && v.Met != VerdictNone {
			t.Errorf("%s judged without rows: %q", v.Target, v.Met)
		}
	}
}

// TestReadLate counts by hand, against the send stamps, the chunks
// recorded no earlier than their stream's next token was sent (a token
// at least half a pace, here 10 ms, later), and which of them the trace
// marked. Of a's ten chunks, the first was read alone. The second is
// recorded at 41.01 ms, after the third was sent (41 ms): late, and
// marked. The fourth and fifth were sent 9 µs apart (a writer catching
// up) and read together: the fourth is not judged (its next token is no
// pace step), the fifth was read before the sixth was sent; the fourth is
// marked all the same (the trace cannot tell a catch-up write from a late
// read): a mark on time. The sixth and seventh came in the read of the
// eighth, sent 40 and 20 ms after them: both late, the sixth marked, the
// seventh not (an unmarked late read). The ninth has no send time and
// counts nowhere, so the eighth, before it, is not judged; the tenth is
// the last. b's chunk has the second's times but no next token. Late 3,
// marked 3, unmarked 1.
func TestReadLate(t *testing.T) {
	us := int64(time.Microsecond)
	a := &trace.Record{ID: "a", Chunks: []trace.Chunk{
		{ServerT: 1000 * us, T: 1010 * us, Text: "1"},
		{ServerT: 21000 * us, T: 41010 * us, Text: "2", ReadLate: true},
		{ServerT: 41000 * us, T: 41010 * us, Text: "3"},
		{ServerT: 61000 * us, T: 61020 * us, Text: "4", ReadLate: true},
		{ServerT: 61009 * us, T: 61020 * us, Text: "5"},
		{ServerT: 81000 * us, T: 121010 * us, Text: "6", ReadLate: true},
		{ServerT: 101000 * us, T: 121010 * us, Text: "7"},
		{ServerT: 121000 * us, T: 121010 * us, Text: "8"},
		{T: 141000 * us, Text: "9"},
		{ServerT: 141000 * us, T: 141000 * us, Text: "10"},
	}}
	b := &trace.Record{ID: "b", Chunks: []trace.Chunk{{ServerT: 21000 * us, T: 41010 * us, Text: "1"}}}
	late, marked, unmarked := readLate([]*trace.Record{a, b}, 20*time.Millisecond)
	if late != 3 || marked != 3 || unmarked != 1 {
		t.Errorf("readLate = %d late, %d marked, %d unmarked; want 3, 3, 1", late, marked, unmarked)
	}
	if got := readLateShare(3, 400); got != "3 (0.75%)" {
		t.Errorf("readLateShare(3, 400) = %q", got)
	}
}

// TestEndAfterLast: the p99 of end minus last chunk over the successful
// requests with chunks, by hand: a ends 0 after its last chunk, b 300 µs;
// c failed and d has no chunk, so neither counts. Of two values the p99
// by nearest rank (quantiles: rank ⌈0.99 × 2⌉ = 2) is the larger, 300 µs.
func TestEndAfterLast(t *testing.T) {
	us := int64(time.Microsecond)
	recs := []*trace.Record{
		{ID: "a", Done: 100 * us, Chunks: []trace.Chunk{{T: 50 * us}, {T: 100 * us}}},
		{ID: "b", Done: 900 * us, Chunks: []trace.Chunk{{T: 600 * us}}},
		{ID: "c", Done: 5000 * us, Chunks: []trace.Chunk{{T: 10 * us}}, Error: &trace.Error{Class: trace.ErrReset}},
		{ID: "d", Done: 7000 * us},
	}
	if got := endAfterLast(recs); got != 300*time.Microsecond {
		t.Errorf("endAfterLast = %v, want 300µs", got)
	}
}

// TestStampBusy: the busy share on hand-made figures, worked out by hand:
// 1.2 s of client and 0.8 s of simulator CPU over 1.25 s on 2 cores keep
// 2.0 of 2.5 core-seconds busy, 80%.
func TestStampBusy(t *testing.T) {
	r := StampRow{ClientCPU: 1200 * time.Millisecond, ServerCPU: 800 * time.Millisecond, Wall: 1250 * time.Millisecond}
	if got := r.Busy(2); math.Abs(got-0.8) > 1e-12 {
		t.Errorf("Busy(2) = %v, want 0.8", got)
	}
	if got := (StampRow{ClientCPU: time.Second}).Busy(2); got != 0 {
		t.Errorf("no wall time: Busy = %v, want 0 (not measured)", got)
	}
	if got := r.Busy(0); got != 0 {
		t.Errorf("no cores: Busy = %v, want 0", got)
	}
}
