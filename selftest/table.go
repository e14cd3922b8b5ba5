package selftest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
)

// Targets are the figures of docs/PERFORMANCE.md for this 2-core machine.
const (
	TargetCPUPerToken   = 1500 * time.Nanosecond // at 256 streams (section 1)
	TargetCPUPerChunk   = 12 * time.Microsecond  // at 1,024 paced streams, loopback (section 3)
	TargetHeld          = 10000                  // streams for 60 s
	TargetBytesPerToken = 4.0
	TargetAnalyzeTokS   = 10e6
)

// The timestamp targets, each over plain HTTP and over TLS to loopback.
const (
	TargetStampP99     = 500 * time.Microsecond // at 1,024 aligned streams
	TargetStampWideP99 = 2 * time.Millisecond   // at TargetStampWide streams
	TargetStampWide    = 10000
	// TargetEndAfterLastP99 bounds a response's end minus its last chunk
	// at 16 aligned streams: one clock for both.
	TargetEndAfterLastP99 = 500 * time.Microsecond
)

// The schedule targets: the lateness p99 at a rate over the wake-up
// floor p99 of the same run at the dispatcher's policy (schedFloor), and
// a burst's send spread.
var TargetSchedRatio = []struct {
	Rate, Ratio float64
	What        string
}{{500, 1.2, "500 req/s"}, {100, 2, "100 req/s"}, {2000, 2, "2,000 req/s"}}

const (
	TargetBurstSize   = 32
	TargetBurstSpread = 500 * time.Microsecond
)

// schedFloor is the wake-up floor a dispatcher that got policy is judged
// against in run: the SCHED_FIFO floor for a realtime policy when it was
// measured, else the normal one. ok is false when neither was measured.
func (r *Result) schedFloor(run int, policy string) (f Floor, ok bool) {
	ri := r.run(run)
	if (policy == replay.PolicyFIFO || policy == replay.PolicyRR) && ri.FloorFIFO.Wakeups > 0 && ri.FloorFIFO.P99 > 0 {
		return ri.FloorFIFO, true
	}
	return ri.Floor, ri.Floor.Wakeups > 0 && ri.Floor.P99 > 0
}

// Verdict is one target's outcome over the runs.
type Verdict struct {
	Target string
	// Figure is the median over the runs, Spread the lowest and highest
	// ("-" for one run), Runs how many runs met the target of how many
	// measured it, Floor what the machine's noise allowed (see Outcome).
	Figure, Spread, Runs, Floor string
	// Met is VerdictMet, VerdictNoise, VerdictMissed or VerdictNone.
	Met string
}

// The verdicts a target can get.
const (
	VerdictMet    = "met"
	VerdictNoise  = "missed, within machine noise"
	VerdictMissed = "MISSED"
	VerdictNone   = "not measured"
)

// Outcome is one run's figure judged against its target.
type Outcome int

const (
	// Met: the figure is within the target.
	Met Outcome = iota
	// Noise: the figure misses the target by no more than the run's
	// noise floor explains.
	Noise
	// Missed: the figure misses the target by more than that.
	Missed
)

// latencyOutcome judges a lateness-like figure (lower is better) against
// target: a figure above the target by no more than floor, the p99
// lateness of a thread that did nothing but sleep to absolute deadlines on
// the same machine in the same run, is Noise: a process woken by the same
// kernel on the same cores cannot be expected to beat the machine's own
// wake-ups.
func latencyOutcome(fig, target, floor time.Duration) Outcome {
	switch {
	case fig <= target:
		return Met
	case fig <= target+max(floor, 0):
		return Noise
	}
	return Missed
}

// rateOutcome judges a wall-clock rate (higher is better): below the
// target but at or above it per second of CPU the process actually got is
// Noise, since then the rate was lost waiting for a core, not to the code.
func rateOutcome(wall, perCPU, target float64) Outcome {
	switch {
	case wall >= target:
		return Met
	case perCPU >= target:
		return Noise
	}
	return Missed
}

// plainOutcome judges a figure the machine's noise does not explain (CPU
// time, bytes, streams held): met or missed.
func plainOutcome(ok bool) Outcome {
	if ok {
		return Met
	}
	return Missed
}

// combine is the verdict over the runs: met only if every run met, MISSED
// if any run missed by more than its floor explains, otherwise missed
// within machine noise. The targets are promised in every run, not in a
// lucky one.
func combine(o []Outcome) string {
	if len(o) == 0 {
		return VerdictNone
	}
	worst := slices.Max(o)
	switch worst {
	case Met:
		return VerdictMet
	case Noise:
		return VerdictNoise
	}
	return VerdictMissed
}

// runsMet is "2 of 3".
func runsMet(o []Outcome) string {
	n := 0
	for _, x := range o {
		if x == Met {
			n++
		}
	}
	return fmt.Sprintf("%d of %d", n, len(o))
}

// spreadOf gives the median of the runs' figures and their spread: the
// lowest and highest, each written by format, then unit; "-" for one run.
func spreadOf[T int64 | float64 | time.Duration](v []T, format func(T) string, unit string) (T, string) {
	m, lo, hi := median(v)
	if len(v) < 2 {
		return m, "-"
	}
	return m, format(lo) + "–" + format(hi) + unit
}

func spreadDur(v []time.Duration) (string, string) {
	m, spread := spreadOf(v, fmtDur, "")
	return fmtDur(m), spread
}

// Verdicts judges the result against the targets, each over every run
// that measured it. In a short run the target's scale is usually not
// reached; such targets are "not measured".
func (r *Result) Verdicts() []Verdict {
	var v []Verdict
	none := func(t string) {
		v = append(v, Verdict{Target: t, Figure: "-", Spread: "-", Runs: "-", Floor: "-", Met: VerdictNone})
	}
	floorP99 := func(run int) time.Duration { return r.run(run).Floor.P99 }
	// latencyOf judges lateness figures; a run whose incomplete[i] is set
	// did not measure the target's case (a failed request, streams not all
	// open together) and is missed whatever its figure.
	latencyOf := func(t string, figs []time.Duration, runs []int, target time.Duration, incomplete []bool) {
		if len(figs) == 0 {
			none(t)
			return
		}
		var o []Outcome
		var fl []time.Duration
		bad := 0
		for i, f := range figs {
			oc := latencyOutcome(f, target, floorP99(runs[i]))
			if incomplete != nil && incomplete[i] {
				oc, bad = Missed, bad+1
			}
			o = append(o, oc)
			fl = append(fl, floorP99(runs[i]))
		}
		med, spread := spreadDur(figs)
		fm, _ := spreadDur(fl)
		rm := runsMet(o)
		if bad > 0 {
			rm += fmt.Sprintf(" (%d incomplete)", bad)
		}
		v = append(v, Verdict{Target: t, Figure: med, Spread: spread, Runs: rm, Floor: "wake-up p99 " + fm, Met: combine(o)})
	}

	// The client's CPU, from the run's first phase: per token with many
	// tokens a read (section 1), per chunk with one chunk a read (section
	// 3's 1,024 aligned streams over plain HTTP).
	// A CPU time has no noise floor, but its kernel part (getrusage's
	// system time) is the share the client's own code does not run, so
	// the floor column says it: a target below it cannot be met by the
	// client's code alone.
	var figs, sys []time.Duration
	var o []Outcome
	cpuRow := func(t string) {
		if len(figs) > 0 {
			med, spread := spreadDur(figs)
			k, _ := spreadDur(sys)
			v = append(v, Verdict{Target: t, Figure: med, Spread: spread, Runs: runsMet(o), Floor: "none (CPU time); kernel's part " + k, Met: combine(o)})
		} else {
			none(t)
		}
	}
	for _, c := range r.CPU {
		if c.Streams == 256 {
			figs, sys = append(figs, c.ClientPerToken()), append(sys, c.ClientSysPerToken())
			o = append(o, plainOutcome(c.ClientPerToken() <= TargetCPUPerToken && c.Failed == 0))
		}
	}
	cpuRow(fmt.Sprintf("client CPU ≤ %g µs/token at 256 streams", TargetCPUPerToken.Seconds()*1e6))
	figs, sys, o = nil, nil, nil
	for _, s := range r.Stamp {
		if s.Streams == 1024 && !s.TLS && s.OpenRate == 0 {
			c := perToken(s.ClientCPU, int64(s.Chunks))
			figs, sys = append(figs, c), append(sys, perToken(s.ClientSys, int64(s.Chunks)))
			o = append(o, plainOutcome(c <= TargetCPUPerChunk && s.Failed == 0))
		}
	}
	cpuRow(fmt.Sprintf("client CPU ≤ %g µs/chunk at 1,024 aligned streams, loopback", TargetCPUPerChunk.Seconds()*1e6))

	var t string

	t = "10,000 streams held 60 s without client errors"
	if len(r.Hold) > 0 && r.Plan.HoldFor >= 60*time.Second {
		held := map[int]int{}
		for _, h := range r.Hold {
			if h.Held(60*time.Second) && h.Streams > held[h.Run] {
				held[h.Run] = h.Streams
			}
			if _, ok := held[h.Run]; !ok {
				held[h.Run] = 0
			}
		}
		var n []int64
		o = nil
		for _, run := range slices.Sorted(maps.Keys(held)) {
			n = append(n, int64(held[run]))
			o = append(o, plainOutcome(held[run] >= TargetHeld))
		}
		m, spread := spreadOf(n, func(x int64) string { return fmt.Sprintf("%d", x) }, "")
		v = append(v, Verdict{Target: t, Figure: fmt.Sprintf("%d held", m), Spread: spread, Runs: runsMet(o), Floor: "none (count)", Met: combine(o)})
	} else {
		none(t)
	}

	// The timestamp targets, over plain HTTP and over TLS to loopback. A
	// run with a failed request, or whose streams were not all open
	// together, did not measure the target's case and cannot meet it.
	for _, tt := range []struct {
		streams int
		target  time.Duration
		what    string
	}{
		{1024, TargetStampP99, "0.5 ms at 1,024 aligned streams"},
		{TargetStampWide, TargetStampWideP99, "2 ms at 10,000 streams"},
	} {
		for _, useTLS := range []bool{false, true} {
			figs, runs, incomplete := []time.Duration(nil), []int(nil), []bool(nil)
			for _, s := range r.Stamp {
				if s.Streams == tt.streams && s.TLS == useTLS {
					figs, runs = append(figs, s.P99), append(runs, s.Run)
					incomplete = append(incomplete, s.Failed > 0 || s.Peak < s.Streams)
				}
			}
			tr := TransportPlain
			if useTLS {
				tr = "TLS to loopback"
			}
			latencyOf(fmt.Sprintf("timestamp error p99 ≤ %s, %s", tt.what, tr), figs, runs, tt.target, incomplete)
		}
	}

	// One clock per request: a response's end and its last chunk are both
	// kernel stamps, so on the simulator, which sends the stream's end
	// right after its last chunk, they differ by the server's own gap.
	t = "response end − last chunk p99 ≤ 0.5 ms at 16 aligned streams, loopback"
	var ends []time.Duration
	var endRuns []int
	for _, s := range r.Stamp {
		if s.Streams == 16 && !s.TLS && s.OpenRate == 0 {
			ends, endRuns = append(ends, s.EndAfterLast), append(endRuns, s.Run)
		}
	}
	latencyOf(t, ends, endRuns, TargetEndAfterLastP99, nil)

	// A late read is never silent: every chunk read late by the send
	// stamps is marked in the trace.
	t = "chunks read late and not marked in the trace: 0, every section-3 level"
	var unmarked []int64
	o = nil
	for _, s := range r.Stamp {
		unmarked = append(unmarked, int64(s.Unmarked))
		o = append(o, plainOutcome(s.Unmarked == 0))
	}
	if len(unmarked) > 0 {
		var sum int64
		for _, u := range unmarked {
			sum += u
		}
		v = append(v, Verdict{Target: t, Figure: fmt.Sprintf("%d unmarked", sum), Spread: "-", Runs: runsMet(o), Floor: "none (count)", Met: combine(o)})
	} else {
		none(t)
	}

	// The schedule is judged against what the machine allows: the
	// lateness p99 over the same run's wake-up floor p99 at the
	// dispatcher's policy. A run without a floor is not judged.
	for _, st := range TargetSchedRatio {
		t = fmt.Sprintf("schedule lateness p99 ≤ %g× the wake-up floor p99 at %s", st.Ratio, st.What)
		var ratios []float64
		var floors []time.Duration
		o = nil
		for _, s := range r.Sched {
			f, ok := r.schedFloor(s.Run, s.Policy)
			if s.Rate != st.Rate || !ok {
				continue
			}
			q := float64(s.P99) / float64(f.P99)
			ratios, floors = append(ratios, q), append(floors, f.P99)
			o = append(o, plainOutcome(q <= st.Ratio && s.Failed == 0))
		}
		if len(ratios) == 0 {
			none(t)
			continue
		}
		m, spread := spreadOf(ratios, func(x float64) string { return fmt.Sprintf("%.2f×", x) }, "")
		fm, _ := spreadDur(floors)
		v = append(v, Verdict{Target: t, Figure: fmt.Sprintf("%.2f×", m), Spread: spread, Runs: runsMet(o),
			Floor: "wake-up p99 " + fm + " at the dispatcher's policy", Met: combine(o)})
	}

	t = fmt.Sprintf("burst send spread ≤ %g ms at %d requests (largest of the run's bursts)", TargetBurstSpread.Seconds()*1e3, TargetBurstSize)
	figs = nil
	o = nil
	for _, b := range r.Burst {
		if b.Size == TargetBurstSize && b.Bursts > 0 {
			figs = append(figs, b.Spread)
			o = append(o, plainOutcome(b.Spread <= TargetBurstSpread && b.Failed == 0))
		}
	}
	if len(figs) > 0 {
		med, spread := spreadDur(figs)
		v = append(v, Verdict{Target: t, Figure: med, Spread: spread, Runs: runsMet(o), Floor: "none (sends, not wake-ups)", Met: combine(o)})
	} else {
		none(t)
	}

	t = "trace ≤ 4 bytes per output token"
	var bpt []float64
	o = nil
	for _, s := range r.Size {
		if strings.HasPrefix(s.What, "count-up") {
			bpt = append(bpt, s.PerToken())
			o = append(o, plainOutcome(s.PerToken() <= TargetBytesPerToken))
		}
	}
	if len(bpt) > 0 {
		m, spread := spreadOf(bpt, func(x float64) string { return fmt.Sprintf("%.2f", x) }, " B")
		v = append(v, Verdict{Target: t, Figure: fmt.Sprintf("%.2f B", m), Spread: spread, Runs: runsMet(o), Floor: "none (bytes)", Met: combine(o)})
	} else {
		none(t)
	}

	t = "analysis ≥ 10 million tokens/s (10M-token trace)"
	var rate, perCPU []float64
	o = nil
	for _, a := range r.Analysis {
		if a.Tokens >= 10_000_000 {
			rate = append(rate, a.TokensPerSecond())
			perCPU = append(perCPU, a.TokensPerCPUSecond())
			o = append(o, rateOutcome(a.TokensPerSecond(), a.TokensPerCPUSecond(), TargetAnalyzeTokS))
		}
	}
	if len(rate) > 0 {
		m, spread := spreadOf(rate, func(x float64) string { return fmt.Sprintf("%.2fM", x/1e6) }, "")
		pc, _, _ := median(perCPU)
		v = append(v, Verdict{Target: t, Figure: fmt.Sprintf("%.2fM tok/s", m/1e6), Spread: spread, Runs: runsMet(o),
			Floor: fmt.Sprintf("%.2fM tok/CPU-s", pc/1e6), Met: combine(o)})
	} else {
		none(t)
	}
	return v
}

// WriteTable prints the result as the plain-text tables docs/PERFORMANCE.md
// quotes.
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	m := r.Machine
	scale := "full"
	if r.Short {
		scale = "--short (CI scale: shows regressions, not the targets)"
	}
	fmt.Fprintf(&b, "llmreplay selftest, %s: client against the simulator's fast profile in a child process\n", scale)
	fmt.Fprintf(&b, "machine: %d cores, %s, %s %s/%s; load average %.2f at start, %.2f at end; %d run(s) of every section\n",
		m.Cores, orDash(m.CPU), m.GoVersion, m.OS, m.Arch, m.LoadStart[0], m.LoadEnd[0], len(r.Runs))
	if r.NoFileHard > 0 {
		fmt.Fprintf(&b, "open files: RLIMIT_NOFILE soft %d, hard %d (soft raised to hard)\n", r.NoFileSoft, r.NoFileHard)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	section := func(title string) {
		tw.Flush()
		fmt.Fprintf(&b, "\n%s\n", title)
	}

	if len(r.Runs) > 0 {
		f := r.Runs[0].Floor
		how := "not measured"
		if f.Wakeups > 0 {
			how = fmt.Sprintf("%d wake-ups every %v, %s", f.Wakeups, f.Interval, f.Method)
		}
		section("0. Machine noise floor, before each run: wake-up lateness (" + how + ") at SCHED_OTHER (floor) and, when permitted, SCHED_FIFO (FIFO), as cyclictest measures it without and with -p; CPU steal, load average")
		fmt.Fprintln(tw, "run\tfloor p50\tfloor p99\tfloor max\tsteal\tload start\tload end\tFIFO p50\tFIFO p99\tFIFO max\t")
		var refused string
		for _, ri := range r.Runs {
			p50, p99, mx := "-", "-", "-"
			if ri.Floor.Wakeups > 0 {
				p50, p99, mx = fmtDur(ri.Floor.P50), fmtDur(ri.Floor.P99), fmtDur(ri.Floor.Max)
			}
			f50, f99, fmx := "-", "-", "-"
			if ri.FloorFIFO.Wakeups > 0 {
				f50, f99, fmx = fmtDur(ri.FloorFIFO.P50), fmtDur(ri.FloorFIFO.P99), fmtDur(ri.FloorFIFO.Max)
			} else if ri.FIFOWhy != "" {
				f50, refused = "not permitted", ri.FIFOWhy
			}
			steal := "not reported"
			if ri.Steal >= 0 {
				steal = fmt.Sprintf("%.1f%%", 100*ri.Steal)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", ri.Run, p50, p99, mx, steal, ri.LoadStart[0], ri.LoadEnd[0], f50, f99, fmx)
		}
		if refused != "" {
			fmt.Fprintf(tw, "(SCHED_FIFO refused: %s; a realtime policy needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0)\n", refused)
		}
	}
	// ratio is a figure over its run's floor p99, "-" without a floor.
	ratio := func(d time.Duration, run int) string {
		f := r.run(run).Floor
		if f.Wakeups == 0 || f.P99 <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2g×", float64(d)/float64(f.P99))
	}
	if len(r.CPU) > 0 {
		section("1. CPU per streamed token (getrusage of the client process; kernel = its system time, the part of client/token spent in the kernel on the client's behalf; GC share = the Go runtime's estimate of its collector's time over that CPU, which a busy machine inflates; server = the child's /proc CPU)")
		fmt.Fprintln(tw, "run\tstreams\trequests\tfailed\ttokens\twall\tclient CPU\tclient/token\tkernel/token\tGC share\tallocs/token\tbytes/token\tserver/token\t")
		for _, c := range r.CPU {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.0f%%\t%.1f\t%.0f\t%s\t\n", c.Run, c.Streams, c.Requests, c.Failed, c.Tokens,
				fmtDur(c.Wall), fmtDur(c.ClientCPU), fmtDur(c.ClientPerToken()), fmtDur(c.ClientSysPerToken()), 100*c.GCShare(), c.AllocsPerToken(), c.BytesPerToken(), fmtDur(c.ServerPerToken()))
		}
	}
	if len(r.Hold) > 0 {
		section(fmt.Sprintf("2. Streams held open together for %v (opened at %g/s, one token every %v; tried in order until one fails)", r.Plan.HoldFor, r.Plan.HoldRate, r.Plan.HoldInterval))
		fmt.Fprintln(tw, "run\tstreams\tok\terrors\tpeak open\tall open together\theld\t")
		for _, h := range r.Hold {
			held := "no"
			if h.Held(r.Plan.HoldFor) {
				held = "yes"
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%s\t%s\t\n", h.Run, h.Streams, h.OK, errorCounts(h.Errors), h.Peak, fmtDur(h.Together), held)
		}
		for _, h := range r.Hold {
			if h.Message != "" {
				tw.Flush()
				fmt.Fprintf(&b, "first error in run %d at %d streams: %s\n", h.Run, h.Streams, h.Message)
			}
		}
	}
	if len(r.Stamp) > 0 {
		section("3. Timestamp error: arrival minus the simulator's send time, to loopback over plain HTTP and over TLS (opened: all at once on connections opened beforehand, an aligned burst, +prefill when the simulator held each stream's first token a while after its request arrived so that the whole burst was in before the streams began, or so many per second; peak: streams open together; read late: chunks recorded no earlier than their stream's next token was sent, by the simulator's send stamps, whose error is a pace or more of client delay; marked: chunks the trace marks read late (analyze leaves their gaps out of ITL and says so); unmarked: read late but not marked, which analyze would take at their time; end−last: a response's end minus its last chunk, p99, both kernel stamps; kernel/chunk: the client's system time, the part of its CPU per chunk spent in the kernel; busy: client and simulator CPU over the run's wall time and the machine's cores, near 100% a machine with nothing to spare)")
		fmt.Fprintln(tw, "run\ttransport\tstreams\topened\tpace\tpeak\tchunks\tfailed\tp50\tp99\tp99/floor p99\tmax\tread late\tmarked\tunmarked\tend−last\tclient CPU/chunk\tkernel/chunk\tserver CPU/chunk\tbusy\t")
		for _, s := range r.Stamp {
			opened := "at once"
			if s.OpenRate > 0 {
				opened = fmt.Sprintf("%g/s", s.OpenRate)
			}
			if s.FirstToken > 0 {
				opened += fmt.Sprintf(" +prefill %v", s.FirstToken)
			}
			busy := "-"
			if b := s.Busy(r.Machine.Cores); b > 0 {
				busy = fmt.Sprintf("%.0f%%", 100*b)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", s.Run, s.Transport(), s.Streams, opened, fmtDur(s.Pace), s.Peak, s.Chunks, s.Failed,
				fmtDur(s.P50), fmtDur(s.P99), ratio(s.P99, s.Run), fmtDur(s.Max), readLateShare(s.ReadLate, s.Chunks), s.Marked, s.Unmarked, fmtDur(s.EndAfterLast),
				fmtDur(perToken(s.ClientCPU, int64(s.Chunks))), fmtDur(perToken(s.ClientSys, int64(s.Chunks))), fmtDur(perToken(s.ServerCPU, int64(s.Chunks))), busy)
		}
		writeStampSources(tw, r.Stamp)
	}
	if len(r.Sched) > 0 {
		section(fmt.Sprintf("4. Schedule precision: actual minus scheduled send time, open loop, constant arrivals for %v", r.Plan.SchedFor))
		fmt.Fprintln(tw, "run\trate/s\tdispatcher\trequests\tfailed\tp50\tp99\tfloor p99\tp99/floor p99\tmax\tclient CPU/request\tserver CPU/request\tspin (of a core)\tlargest window\twake-ups past deadline\twaits begun late\t")
		for _, s := range r.Sched {
			fl, q := "-", "-"
			if f, ok := r.schedFloor(s.Run, s.Policy); ok {
				fl, q = fmtDur(f.P99)+" "+f.Policy, fmt.Sprintf("%.3g×", float64(s.P99)/float64(f.P99))
			}
			fmt.Fprintf(tw, "%d\t%g\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%s\t%d\t%d\t\n", s.Run, s.Rate, orDash(s.Policy), s.Requests, s.Failed, fmtDur(s.P50), fmtDur(s.P99), fl, q, fmtDur(s.Max),
				fmtDur(perToken(s.ClientCPU, int64(s.Requests))), fmtDur(perToken(s.ServerCPU, int64(s.Requests))),
				100*s.SpinShare(), fmtDur(s.Dispatch.Window), s.Dispatch.WakePast, s.Dispatch.LateStart)
		}
		fmt.Fprintln(tw, "(dispatcher: the scheduling policy its thread got; floor p99: the run's wake-up floor at that policy, SCHED_FIFO's for a realtime one when measured; spin: time the dispatcher spun before its deadlines over the run's wall time, a bound on its CPU; a send is late when its thread wake-up came after the deadline, or its wait began inside the spin window because the dispatcher came back late from the previous send; the rest of a late send is the spin or the hand-off to the send)")
	}
	if len(r.Burst) > 0 {
		section("4. Burst release: requests built beforehand, released together behind one gate on connections opened beforehand; spread = a burst's last send minus its first")
		fmt.Fprintln(tw, "run\trequests\tbursts\tdispatcher\tfailed\tspread p50\tspread max\t")
		for _, b := range r.Burst {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%s\t%s\t\n", b.Run, b.Size, b.Bursts, orDash(b.Policy), b.Failed, fmtDur(b.SpreadP50), fmtDur(b.Spread))
		}
	}
	if len(r.Size) > 0 {
		section("5. Trace size (zstd file bytes / output tokens)")
		fmt.Fprintln(tw, "run\ttrace\tbytes\ttokens\tbytes/token\t")
		for _, s := range r.Size {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.2f\t\n", s.Run, s.What, s.Bytes, s.Tokens, s.PerToken())
		}
	}
	if len(r.Analysis) > 0 {
		section("6. Analysis speed (analyze.AnalyzeFiles + BuildTable on one trace file; peak heap in use above the baseline, sampled every 5 ms)")
		fmt.Fprintln(tw, "run\ttokens\trequests\tfile\twall\ttokens/s\tCPU\ttokens/CPU-s\tpeak heap\t")
		for _, a := range r.Analysis {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%.2fM\t%s\t%.2fM\t%s\t\n", a.Run, a.Tokens, a.Requests, fmtBytes(uint64(a.FileBytes)), fmtDur(a.Elapsed),
				a.TokensPerSecond()/1e6, fmtDur(a.CPU), a.TokensPerCPUSecond()/1e6, fmtBytes(a.PeakHeap))
		}
	}
	section("Targets (median over the runs; a miss no larger than the run's noise floor is \"missed, within machine noise\": docs/PERFORMANCE.md)")
	fmt.Fprintln(tw, "target\tmedian\tspread\truns met\tnoise floor\tverdict\t")
	for _, v := range r.Verdicts() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", v.Target, v.Figure, v.Spread, v.Runs, v.Floor, v.Met)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\ntotal time %s\n", fmtDur(r.Elapsed))
	// tabwriter pads the last cell too; trailing blanks help no reader.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errorCounts is "0" or "reset 3, refused 1", largest first.
func errorCounts(m map[trace.ErrorClass]int) string {
	if len(m) == 0 {
		return "0"
	}
	cs := slices.Collect(maps.Keys(m))
	slices.SortFunc(cs, func(a, b trace.ErrorClass) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(string(a), string(b))
	})
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", c, m[c])
	}
	return strings.Join(parts, ", ")
}

// fmtDur prints a duration with three significant figures in a unit that
// suits it.
func fmtDur(d time.Duration) string {
	switch a := max(d, -d); {
	case a == 0:
		return "0"
	case a < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case a < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	case a < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
}

func fmtBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
