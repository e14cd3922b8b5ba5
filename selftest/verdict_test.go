package selftest

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay"
)

const us = time.Microsecond

// TestVerdictRule checks the rule of docs/PERFORMANCE.md "Verdicts" on
// hand-made figures: a run misses within machine noise when its figure is
// above the target by no more than that run's floor p99; the verdict over
// the runs is the worst run's.
func TestVerdictRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		figs  []time.Duration // schedule p99 at 500/s, one per run
		floor []time.Duration // floor p99 of the same runs
		want  string
		runs  string
		med   string
	}{
		{"all met", []time.Duration{50 * us, 120 * us, 200 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictMet, "3 of 3", "120µs"},
		{"exactly target+floor is noise", []time.Duration{100 * us, 600 * us, 150 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictNoise, "2 of 3", "150µs"},
		{"one run beyond its floor", []time.Duration{100 * us, 601 * us, 150 * us}, []time.Duration{400 * us, 400 * us, 400 * us}, VerdictMissed, "2 of 3", "150µs"},
		{"each run against its own floor", []time.Duration{1000 * us, 300 * us}, []time.Duration{900 * us, 100 * us}, VerdictNoise, "0 of 2", "300µs"},
		{"a small floor explains little", []time.Duration{1000 * us, 300 * us}, []time.Duration{900 * us, 99 * us}, VerdictMissed, "0 of 2", "300µs"},
		{"no floor measured: plain", []time.Duration{201 * us}, []time.Duration{0}, VerdictMissed, "0 of 1", "201µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{}
			for i := range tc.figs {
				r.Runs = append(r.Runs, RunInfo{Run: i + 1, Floor: Floor{Wakeups: 10, P99: tc.floor[i]}})
				r.Sched = append(r.Sched, SchedRow{Run: i + 1, Rate: 500, P99: tc.figs[i]},
					SchedRow{Run: i + 1, Rate: 100, P99: time.Second}) // other rates are not judged
			}
			v := verdictOf(t, r, "schedule lateness")
			if v.Met != tc.want || v.Runs != tc.runs || v.Figure != tc.med {
				t.Errorf("got %q, %s, median %s; want %q, %s, median %s", v.Met, v.Runs, v.Figure, tc.want, tc.runs, tc.med)
			}
		})
	}
}

// The dispatcher spins through its window before each deadline, so the
// schedule's allowance is the floor's p99 less the largest window it used:
// a floor p99 of 400 µs with a 300 µs window allows 100 µs past the
// target, and a window as long as the floor allows nothing.
func TestVerdictScheduleSpinCovers(t *testing.T) {
	for _, tc := range []struct {
		name               string
		fig, floor, window time.Duration
		want               string
	}{
		{"within the floor left past the window", 300 * us, 400 * us, 300 * us, VerdictNoise},
		{"beyond it", 301 * us, 400 * us, 300 * us, VerdictMissed},
		{"a window past the floor allows nothing", 201 * us, 400 * us, 500 * us, VerdictMissed},
		{"met is met", 200 * us, 400 * us, 500 * us, VerdictMet},
	} {
		r := &Result{Runs: []RunInfo{{Run: 1, Floor: Floor{Wakeups: 10, P99: tc.floor}}},
			Sched: []SchedRow{{Run: 1, Rate: 500, P99: tc.fig, Dispatch: replay.DispatchStats{Window: tc.window}}}}
		v := verdictOf(t, r, "schedule lateness")
		if v.Met != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, v.Met, tc.want)
		}
		if !strings.Contains(v.Floor, "less spin window") {
			t.Errorf("%s: floor column %q does not say the window was taken off", tc.name, v.Floor)
		}
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
			{Run: 1, Streams: 256, Tokens: 1000, ClientCPU: 900 * us},
			{Run: 2, Streams: 256, Tokens: 1000, ClientCPU: 1100 * us}, // 1.1 µs: missed whatever the floor
			{Run: 3, Streams: 256, Tokens: 1000, ClientCPU: 950 * us},
		},
		Size: []SizeRow{{Run: 1, What: "count-up", Bytes: 300, Tokens: 100}, {Run: 1, What: "fast", Bytes: 900, Tokens: 100}},
		Analysis: []AnalysisRow{
			{Run: 1, Tokens: 10_000_000, Elapsed: 2 * time.Second, CPU: 900 * time.Millisecond}, // 5M/s wall, 11M per CPU-s
			{Run: 2, Tokens: 10_000_000, Elapsed: 500 * time.Millisecond, CPU: 500 * time.Millisecond},
		},
	}
	for _, tc := range []struct{ target, want, runs string }{
		{"client CPU", VerdictMissed, "2 of 3"},
		{"trace ≤ 4 bytes", VerdictMet, "1 of 1"},
		{"analysis", VerdictNoise, "1 of 2"},
		{"timestamp error", VerdictNone, "-"},
		{"10,000 streams", VerdictNone, "-"},
	} {
		if v := verdictOf(t, r, tc.target); v.Met != tc.want || v.Runs != tc.runs {
			t.Errorf("%s: got %q, %s; want %q, %s", tc.target, v.Met, v.Runs, tc.want, tc.runs)
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
