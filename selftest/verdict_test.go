package selftest

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay"
)

const us = time.Microsecond

// TestVerdictRule checks the rule of docs/PERFORMANCE.md "Verdicts" on
// hand-made figures: a run misses within machine noise when its figure is
// above the target (0.5 ms, the timestamp error at 1,024 streams) by no
// more than that run's floor p99; the verdict over the runs is the worst
// run's.
func TestVerdictRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		figs  []time.Duration // timestamp error p99 at 1,024 streams, one per run
		floor []time.Duration // floor p99 of the same runs
		want  string
		runs  string
		med   string
	}{
		{"all met", []time.Duration{50 * us, 120 * us, 500 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictMet, "3 of 3", "120µs"},
		{"exactly target+floor is noise", []time.Duration{100 * us, 900 * us, 150 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictNoise, "2 of 3", "150µs"},
		{"one run beyond its floor", []time.Duration{100 * us, 901 * us, 150 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictMissed, "2 of 3", "150µs"},
		{"each run against its own floor", []time.Duration{1300 * us, 600 * us}, []time.Duration{900 * us, 100 * us}, VerdictNoise, "0 of 2", "600µs"},
		{"a small floor explains little", []time.Duration{1300 * us, 600 * us}, []time.Duration{900 * us, 99 * us}, VerdictMissed, "0 of 2", "600µs"},
		{"no floor measured: plain", []time.Duration{501 * us}, []time.Duration{0}, VerdictMissed, "0 of 1", "501µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{}
			for i := range tc.figs {
				r.Runs = append(r.Runs, RunInfo{Run: i + 1, Floor: Floor{Wakeups: 10, P99: tc.floor[i]}})
				r.Stamp = append(r.Stamp, StampRow{Run: i + 1, Streams: 1024, Peak: 1024, P99: tc.figs[i]},
					StampRow{Run: i + 1, Streams: 256, Peak: 256, P99: time.Second}) // other levels are not judged
			}
			v := verdictOf(t, r, "timestamp error p99 ≤ 0.5 ms at 1,024 aligned streams, loopback")
			if v.Met != tc.want || v.Runs != tc.runs || v.Figure != tc.med {
				t.Errorf("got %q, %s, median %s; want %q, %s, median %s", v.Met, v.Runs, v.Figure, tc.want, tc.runs, tc.med)
			}
		})
	}
}

// TestVerdictScheduleRatio: the schedule's lateness p99 is judged as a
// ratio to the same run's wake-up floor p99 at the policy its dispatcher
// got: SCHED_FIFO's floor for a realtime dispatcher when it was measured,
// the normal one otherwise; 1.2× at 500/s, 2× at 100 and 2,000/s; a run
// without a floor is not judged.
func TestVerdictScheduleRatio(t *testing.T) {
	other := Floor{Wakeups: 10, P99: 1000 * us, Policy: replay.PolicyNormal}
	fifo := Floor{Wakeups: 10, P99: 100 * us, Policy: replay.PolicyFIFO}
	for _, tc := range []struct {
		name   string
		rate   float64
		p99    time.Duration
		policy string
		fifo   Floor
		want   string
		figure string
	}{
		// 1,200 µs over a 1,000 µs floor: 1.2×, the bound at 500/s.
		{"normal at the bound", 500, 1200 * us, replay.PolicyNormal, fifo, VerdictMet, "1.20×"},
		{"normal past it", 500, 1201 * us, replay.PolicyNormal, fifo, VerdictMissed, "1.20×"},
		// The same 1,200 µs from a SCHED_FIFO dispatcher is 12× its
		// floor of 100 µs.
		{"FIFO against FIFO's floor", 500, 1200 * us, replay.PolicyFIFO, fifo, VerdictMissed, "12.00×"},
		{"FIFO within 1.2×", 500, 120 * us, replay.PolicyFIFO, fifo, VerdictMet, "1.20×"},
		// SCHED_RR is realtime too; nice -20 is judged at the normal floor.
		{"RR against FIFO's floor", 500, 120 * us, replay.PolicyRR, fifo, VerdictMet, "1.20×"},
		{"nice against the normal floor", 500, 1200 * us, replay.PolicyNice, fifo, VerdictMet, "1.20×"},
		// FIFO refused in the floor: a FIFO dispatcher (cannot happen,
		// but the rule holds) falls back to the normal floor.
		{"no FIFO floor", 500, 1200 * us, replay.PolicyFIFO, Floor{}, VerdictMet, "1.20×"},
		{"2× at 100/s", 100, 2000 * us, replay.PolicyNormal, fifo, VerdictMet, "2.00×"},
		{"past 2× at 2,000/s", 2000, 2001 * us, replay.PolicyNormal, fifo, VerdictMissed, "2.00×"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Runs: []RunInfo{{Run: 1, Floor: other, FloorFIFO: tc.fifo}},
				Sched: []SchedRow{{Run: 1, Rate: tc.rate, P99: tc.p99, Policy: tc.policy}}}
			var v Verdict
			for _, st := range TargetSchedRatio {
				if st.Rate == tc.rate {
					v = verdictOf(t, r, fmt.Sprintf("schedule lateness p99 ≤ %g× the wake-up floor p99 at %s", st.Ratio, st.What))
				}
			}
			if v.Met != tc.want || v.Figure != tc.figure {
				t.Errorf("got %q, %s; want %q, %s", v.Met, v.Figure, tc.want, tc.figure)
			}
		})
	}
	r := &Result{Runs: []RunInfo{{Run: 1}}, Sched: []SchedRow{{Run: 1, Rate: 500, P99: time.Millisecond}}}
	if v := verdictOf(t, r, "schedule lateness p99 ≤ 1.2×"); v.Met != VerdictNone {
		t.Errorf("without a floor: %q, want %q", v.Met, VerdictNone)
	}
}

// TestVerdictBurstSpread: the burst target takes each run's largest
// burst spread at 32 requests, and a failed request misses it.
func TestVerdictBurstSpread(t *testing.T) {
	r := &Result{Burst: []BurstRow{
		{Run: 1, Size: 32, Bursts: 10, SpreadP50: 100 * us, Spread: 500 * us},
		{Run: 2, Size: 32, Bursts: 10, SpreadP50: 100 * us, Spread: 300 * us, Failed: 1},
		{Run: 3, Size: 32, Bursts: 10, SpreadP50: 100 * us, Spread: 501 * us},
		{Run: 3, Size: 8, Bursts: 10, Spread: time.Second}, // not the target's size
	}}
	v := verdictOf(t, r, "burst send spread")
	if v.Met != VerdictMissed || v.Runs != "1 of 3" || v.Figure != "500µs" {
		t.Errorf("got %q, %s, median %s; want %q, 1 of 3, median 500µs", v.Met, v.Runs, v.Figure, VerdictMissed)
	}
}

// TestVerdictKinds checks the other kinds of figure: CPU time and bytes
// get no allowance, a wall-clock rate is within noise when its rate per
// CPU-second meets the target, and a target no run measured says so.
func TestVerdictKinds(t *testing.T) {
	big := Floor{Wakeups: 10, P99: time.Second}
	r := &Result{
		Runs: []RunInfo{{Run: 1, Floor: big}, {Run: 2, Floor: big}, {Run: 3, Floor: big}},
		CPU: []CPURow{
			{Run: 1, Streams: 256, Tokens: 1000, ClientCPU: 1400 * us, ClientSys: 700 * us},
			{Run: 2, Streams: 256, Tokens: 1000, ClientCPU: 1600 * us, ClientSys: 900 * us}, // 1.6 µs: missed whatever the floor
			{Run: 3, Streams: 256, Tokens: 1000, ClientCPU: 1450 * us, ClientSys: 800 * us},
		},
		// Per chunk at 1,024 aligned streams over plain HTTP: 11 and 13
		// µs; the TLS row and the 16-stream row are not this target's.
		Stamp: []StampRow{
			{Run: 1, Streams: 1024, Chunks: 1000, ClientCPU: 11 * time.Millisecond, ClientSys: 6 * time.Millisecond},
			{Run: 2, Streams: 1024, Chunks: 1000, ClientCPU: 13 * time.Millisecond, ClientSys: 9 * time.Millisecond},
			{Run: 1, Streams: 1024, TLS: true, Chunks: 1000, ClientCPU: 30 * time.Millisecond},
			{Run: 1, Streams: 16, Chunks: 1000, ClientCPU: 30 * time.Millisecond},
		},
		Size: []SizeRow{{Run: 1, What: "count-up", Bytes: 300, Tokens: 100}, {Run: 1, What: "fast", Bytes: 900, Tokens: 100}},
		Analysis: []AnalysisRow{
			{Run: 1, Tokens: 10_000_000, Elapsed: 2 * time.Second, CPU: 900 * time.Millisecond}, // 5M/s wall, 11M per CPU-s
			{Run: 2, Tokens: 10_000_000, Elapsed: 500 * time.Millisecond, CPU: 500 * time.Millisecond},
		},
	}
	// The CPU rows' floor column is their kernel part's median: 0.8 µs
	// per token (0.7, 0.9, 0.8) and 6 µs per chunk (6 and 9: of two,
	// the harness's median is the lower, as for every figure).
	for _, tc := range []struct{ target, want, runs, floor string }{
		{"client CPU ≤ 1.5 µs/token", VerdictMissed, "2 of 3", "none (CPU time); kernel's part 800ns"},
		{"client CPU ≤ 12 µs/chunk", VerdictMissed, "1 of 2", "none (CPU time); kernel's part 6µs"},
		{"trace ≤ 4 bytes", VerdictMet, "1 of 1", ""},
		{"analysis", VerdictNoise, "1 of 2", ""},
		{"10,000 streams", VerdictNone, "-", ""},
	} {
		v := verdictOf(t, r, tc.target)
		if v.Met != tc.want || v.Runs != tc.runs {
			t.Errorf("%s: got %q, %s; want %q, %s", tc.target, v.Met, v.Runs, tc.want, tc.runs)
		}
		if tc.floor != "" && v.Floor != tc.floor {
			t.Errorf("%s: floor %q, want %q", tc.target, v.Floor, tc.floor)
		}
	}
	r.Analysis[0].CPU = 1100 * time.Millisecond // 9.1M per CPU-second: the code is too slow
	if v := verdictOf(t, r, "analysis"); v.Met != VerdictMissed {
		t.Errorf("analysis below target per CPU-second: %q, want %q", v.Met, VerdictMissed)
	}
}

func verdictOf(t *testing.T, r *Result, prefix string) Verdict {
	t.Helper()
	for _, v := range r.Verdicts() {
		if len(v.Target) >= len(prefix) && v.Target[:len(prefix)] == prefix {
			return v
		}
	}
	t.Fatalf("no verdict for %q", prefix)
	return Verdict{}
}

// TestParseCPUStat reads the steal column of /proc/stat's cpu line.
func TestParseCPUStat(t *testing.T) {
	for _, tc := range []struct {
		line         string
		total, steal uint64
		ok           bool
	}{
		{"cpu  100 5 50 800 10 1 2 32 7 0", 1000, 32, true},
		{"cpu  100 5 50 800 10 1 2", 0, 0, false}, // no steal column
		{"cpu0 100 5 50 800 10 1 2 32", 0, 0, false},
		{"cpu  100 x 50 800 10 1 2 32", 0, 0, false},
	} {
		got := parseCPUStat(tc.line)
		if got.Total != tc.total || got.Steal != tc.steal || got.OK != tc.ok {
			t.Errorf("%q → %+v, want total %d steal %d ok %v", tc.line, got, tc.total, tc.steal, tc.ok)
		}
	}
	a, b := CPUStat{Total: 1000, Steal: 10, OK: true}, CPUStat{Total: 3000, Steal: 110, OK: true}
	if s := StealShare(a, b); s != 0.05 {
		t.Errorf("steal share %v, want 0.05", s)
	}
	if s := StealShare(a, CPUStat{}); s != -1 {
		t.Errorf("steal share without a reading %v, want -1", s)
	}
}
