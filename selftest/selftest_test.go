package selftest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// childEnv makes the test binary serve the simulator instead of running
// tests, so the harness can re-execute it as its child.
const childEnv = "LLMREPLAY_SELFTEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := ServeChild(os.Args[1:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testExe(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func testConfig(t *testing.T) Config {
	exe := testExe(t)
	return Config{Short: true, Child: []string{exe}, ChildEnv: []string{childEnv + "=1"}, Dir: t.TempDir()}
}

// TestShort runs the CI version of the harness and checks that every
// section produced figures that make sense (not that it met the targets:
// a loaded CI machine must not fail the build on timing).
func TestShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the harness runs for seconds")
	}
	cfg := testConfig(t)
	var progress bytes.Buffer
	cfg.Progress = &progress
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	p := ShortPlan
	// One run in the short harness, its noise floor measured first.
	if len(res.Runs) != 1 || res.Runs[0].Floor.Wakeups != p.FloorWakeups || res.Runs[0].Floor.P50 > res.Runs[0].Floor.P99 || res.Runs[0].Floor.P99 > res.Runs[0].Floor.Max {
		t.Errorf("runs %+v: want one, with a floor of %d wake-ups in order", res.Runs, p.FloorWakeups)
	}
	if len(res.CPU) != len(p.CPUStreams) {
		t.Fatalf("%d CPU rows, want %d", len(res.CPU), len(p.CPUStreams))
	}
	for _, c := range res.CPU {
		bursts := max(1, (p.CPUTotal+c.Streams*p.CPUTokens-1)/(c.Streams*p.CPUTokens))
		if c.Failed != 0 || c.Requests != bursts*c.Streams || c.Tokens != int64(c.Requests*p.CPUTokens) {
			t.Errorf("CPU row %+v: want %d requests of %d tokens, none failed", c, bursts*c.Streams, p.CPUTokens)
		}
		// The collector's time is the runtime's estimate of the time its
		// Ps spent collecting, which on a busy machine includes time the
		// threads waited for a core: it can pass the CPU time (101% at
		// load 12), so only its sign is checked. A streamed token costs
		// some allocation (a chunk in the record at least) but not
		// thousands.
		if c.GCCPU < 0 {
			t.Errorf("CPU row %+v: negative GC time", c)
		}
		if a := c.AllocsPerToken(); a <= 0 || a > 1000 {
			t.Errorf("CPU row %+v: %.1f allocations per token", c, a)
		}
		// The client cannot use more CPU than the machine has.
		if c.ClientCPU <= 0 || c.ClientCPU > c.Wall*time.Duration(res.Machine.Cores)+50*time.Millisecond {
			t.Errorf("CPU row %+v: client CPU outside (0, wall × cores]", c)
		}
		// Reading streams from sockets takes system calls, so the kernel's
		// part is above 0, and it is a part of the client's CPU.
		if c.ClientSys <= 0 || c.ClientSys > c.ClientCPU {
			t.Errorf("CPU row %+v: kernel part outside (0, client CPU]", c)
		}
	}
	// Whether they stayed open together, for HoldFor or at all, depends on
	// how late a loaded machine opens them (under -race at load 14 the 200
	// streams of 1.4 s took longer than that to open: peak 195); that they
	// all completed does not.
	if len(res.Hold) != 1 || res.Hold[0].OK != p.HoldStreams[0] || res.Hold[0].Peak <= 0 || res.Hold[0].Peak > p.HoldStreams[0] {
		t.Errorf("hold rows %+v: want all %d streams completed, at most that many open at once", res.Hold, p.HoldStreams[0])
	}
	// Every level of section 3 over plain HTTP and again over TLS, the
	// wide level opened at its rate.
	levels := append(append([]int(nil), p.StampStreams...), p.StampWide)
	if len(res.Stamp) != 2*len(levels) {
		t.Fatalf("%d stamp rows, want %d (each of %v over loopback and TLS)", len(res.Stamp), 2*len(levels), levels)
	}
	for i, s := range res.Stamp {
		lv, wantTLS := levels[i/2], i%2 == 1
		tokens, rate := p.StampTokens, 0.0
		if lv == p.StampWide {
			tokens, rate = p.StampWideTokens, p.StampWideRate
		}
		if s.Run != 1 || s.Streams != lv || s.TLS != wantTLS || s.OpenRate != rate {
			t.Errorf("stamp row %d %+v: want run 1, %d streams, TLS %v, opened at %g/s", i, s, lv, wantTLS, rate)
		}
		if s.Failed != 0 || s.Chunks < s.Streams*tokens {
			t.Errorf("stamp row %+v: want ≥ %d stamped chunks, none failed", s, s.Streams*tokens)
		}
		if s.Peak <= 0 || s.Peak > s.Streams {
			t.Errorf("stamp row %+v: peak open outside (0, streams]", s)
		}
		// Two processes' CPU over the run's wall time cannot pass the
		// machine's cores (a little slack for when the clocks were read).
		if b := s.Busy(res.Machine.Cores); b <= 0 || s.ClientCPU+s.ServerCPU > s.Wall*time.Duration(res.Machine.Cores)+100*time.Millisecond {
			t.Errorf("stamp row %+v: busy %.2f of %d cores", s, b, res.Machine.Cores)
		}
		if s.ClientSys <= 0 || s.ClientSys > s.ClientCPU {
			t.Errorf("stamp row %+v: kernel part outside (0, client CPU]", s)
		}
		// A chunk cannot arrive before it was sent, nor after the run.
		if s.P50 <= 0 || s.P50 > s.P99 || s.P99 > s.Max || s.Max > time.Minute {
			t.Errorf("stamp row %+v: quantiles out of order or out of range", s)
		}
		// Where kernel stamps are on (Linux), TLS chunks carry them too:
		// both sources of the same events.
		if runtime.GOOS == "linux" && !slices.ContainsFunc(s.Sources, func(x StampSource) bool { return x.Source == trace.TimestampsKernel && x.Chunks > 0 }) {
			t.Errorf("stamp row %+v: no kernel-stamped chunks", s)
		}
	}
	if len(res.Sched) != len(p.SchedRates) {
		t.Fatalf("%d schedule rows, want %d", len(res.Sched), len(p.SchedRates))
	}
	for _, s := range res.Sched {
		if want := int(s.Rate * p.SchedFor.Seconds()); s.Requests != want || s.Failed != 0 {
			t.Errorf("schedule row %+v: want %d requests sent, none failed", s, want)
		}
		if s.P50 < 0 || s.P50 > s.P99 || s.P99 > s.Max {
			t.Errorf("schedule row %+v: quantiles out of order or negative", s)
		}
		// Every send was waited for once, and the dispatcher's counters
		// come through the run's summary.
		if d := s.Dispatch; d.Waits != s.Requests || d.WakePast+d.LateStart > d.Waits || d.Window <= 0 || d.Window > time.Millisecond || s.Wall <= 0 {
			t.Errorf("schedule row %+v: dispatcher counters %+v, want one wait per request and a window within 1 ms", s, d)
		}
		// Plain HTTP on pre-warmed connections: the dispatcher writes
		// the requests itself (one not held by its due time on a loaded
		// machine sends itself, so not all are asserted).
		if s.Written <= 0 || s.Written > s.Requests {
			t.Errorf("schedule row %+v: %d requests written by the dispatcher, want some and no more than were sent", s, s.Written)
		}
	}
	// The burst release: every burst of the plan, each request sent, the
	// spread's median no larger than its largest; the schedule rows name
	// the dispatcher's policy.
	if len(res.Burst) != 1 {
		t.Fatalf("%d burst rows, want 1", len(res.Burst))
	}
	if b := res.Burst[0]; b.Size != p.BurstSize || b.Bursts != p.Bursts || b.Failed != 0 || b.SpreadP50 < 0 || b.SpreadP50 > b.Spread {
		t.Errorf("burst row %+v: want %d bursts of %d, none failed, spreads in order", b, p.Bursts, p.BurstSize)
	}
	for _, s := range res.Sched {
		if s.Policy == "" {
			t.Errorf("schedule row %+v names no dispatcher policy", s)
		}
	}
	if ri := res.Runs[0]; (ri.FloorFIFO.Wakeups > 0) == (ri.FIFOWhy != "") {
		t.Errorf("run %+v: want a SCHED_FIFO floor or why it was refused, one of the two", ri)
	}
	if len(res.Size) != 1+len(p.CPUStreams) {
		t.Fatalf("%d size rows, want %d", len(res.Size), 1+len(p.CPUStreams))
	}
	if s := res.Size[0]; s.Tokens != int64(p.SizeStreams*p.SizeTokens) || s.PerToken() <= 0 || s.PerToken() > 64 {
		t.Errorf("size row %+v: want %d tokens and a plausible size", s, p.SizeStreams*p.SizeTokens)
	}
	if len(res.Analysis) != 1 {
		t.Fatalf("%d analysis rows, want 1", len(res.Analysis))
	}
	a := res.Analysis[0]
	if a.Tokens < int64(p.AnalyzeTotal) || a.Requests == 0 || a.TokensPerSecond() <= 0 || a.FileBytes <= 0 {
		t.Errorf("analysis row %+v: want ≥ %d tokens analysed", a, p.AnalyzeTotal)
	}

	var out bytes.Buffer
	if err := res.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. CPU per streamed token", "2. Streams held", "3. Timestamp error", "4. Schedule precision",
		"5. Trace size", "6. Analysis speed", "Targets", "not measured", "0. Machine noise floor", "4. Burst release", "FIFO p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
}

// TestHoldRow checks the overlap arithmetic on hand-made records.
func TestHoldRow(t *testing.T) {
	rec := func(h, d int64, class trace.ErrorClass) *trace.Record {
		r := &trace.Record{Headers: h, Done: d}
		if class != "" {
			r.Error = &trace.Error{Class: class, Message: "boom"}
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		recs     []*trace.Record
		ok, peak int
		together time.Duration
	}{
		{"all overlap", []*trace.Record{rec(1, 100, ""), rec(5, 90, ""), rec(10, 95, "")}, 3, 3, 80},
		{"a chain", []*trace.Record{rec(1, 10, ""), rec(10, 20, ""), rec(20, 30, "")}, 3, 1, 0},
		{"one refused", []*trace.Record{rec(1, 100, ""), rec(0, 2, trace.ErrRefused)}, 1, 1, 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := holdRow(len(tc.recs), tc.recs)
			if r.OK != tc.ok || r.Peak != tc.peak || r.Together != tc.together {
				t.Errorf("got ok %d peak %d together %v, want %d %d %v", r.OK, r.Peak, r.Together, tc.ok, tc.peak, tc.together)
			}
		})
	}
}

// TestQuantiles checks the nearest-rank quantiles.
func TestQuantiles(t *testing.T) {
	for _, tc := range []struct {
		in            []int64
		p50, p99, max time.Duration
	}{
		{[]int64{5}, 5, 5, 5},
		{[]int64{3, 1, 2, 4}, 2, 4, 4},
		{func() []int64 {
			d := make([]int64, 1000)
			for i := range d {
				d[i] = int64(1000 - i)
			}
			return d
		}(), 500, 990, 1000},
	} {
		p50, p99, mx := quantiles(tc.in)
		if p50 != tc.p50 || p99 != tc.p99 || mx != tc.max {
			t.Errorf("quantiles → %v %v %v, want %v %v %v", p50, p99, mx, tc.p50, tc.p99, tc.max)
		}
	}
}
