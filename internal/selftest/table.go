package selftest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Targets are the figures for this 2-core machine.
const (
	TargetCPUPerToken   = 2 * time.Microsecond // at 256 streams
	TargetHeld          = 10000                // streams for 60 s
	TargetStampP99      = time.Millisecond     // at 1,024 streams
	TargetSchedP99      = 200 * time.Microsecond
	TargetBytesPerToken = 4.0
	TargetAnalyzeTokS   = 5e6
)

// Verdict is one target's outcome.
type Verdict struct {
	Target string
	Figure string
	// Met is "met", "MISSED" or "not measured".
	Met string
}

// Verdicts judges the result against the targets. In a short run the
// target's scale is usually not reached; such targets are "not measured".
func (r *Result) Verdicts() []Verdict {
	var v []Verdict
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	none := func(t string) { v = append(v, Verdict{t, "-", "not measured"}) }

	t := "client CPU ≤ 2 µs/token at 256 streams"
	if i := slices.IndexFunc(r.CPU, func(c CPURow) bool { return c.Streams == 256 }); i >= 0 {
		c := r.CPU[i]
		v = append(v, Verdict{t, fmtDur(c.ClientPerToken()), met(c.ClientPerToken() <= TargetCPUPerToken && c.Failed == 0)})
	} else {
		none(t)
	}

	t = "10,000 streams held 60 s without client errors"
	held := 0
	for _, h := range r.Hold {
		if h.Held(60*time.Second) && h.Streams > held {
			held = h.Streams
		}
	}
	if len(r.Hold) > 0 && r.Plan.HoldFor >= 60*time.Second {
		v = append(v, Verdict{t, fmt.Sprintf("%d held", held), met(held >= TargetHeld)})
	} else {
		none(t)
	}

	t = "timestamp error p99 ≤ 1 ms at 1,024 streams"
	if i := slices.IndexFunc(r.Stamp, func(s StampRow) bool { return s.Streams == 1024 }); i >= 0 {
		s := r.Stamp[i]
		v = append(v, Verdict{t, fmtDur(s.P99), met(s.P99 <= TargetStampP99 && s.Failed == 0)})
	} else {
		none(t)
	}

	t = "schedule lateness p99 ≤ 200 µs at 500 req/s"
	if i := slices.IndexFunc(r.Sched, func(s SchedRow) bool { return s.Rate == 500 }); i >= 0 {
		s := r.Sched[i]
		v = append(v, Verdict{t, fmtDur(s.P99), met(s.P99 <= TargetSchedP99)})
	} else {
		none(t)
	}

	t = "trace ≤ 4 bytes per output token"
	if len(r.Size) > 0 && strings.HasPrefix(r.Size[0].What, "count-up") {
		s := r.Size[0]
		v = append(v, Verdict{t, fmt.Sprintf("%.2f B", s.PerToken()), met(s.PerToken() <= TargetBytesPerToken)})
	} else {
		none(t)
	}

	t = "analysis ≥ 5 million tokens/s (10M-token trace)"
	if a := r.Analysis; a != nil && a.Tokens >= 10_000_000 {
		v = append(v, Verdict{t, fmt.Sprintf("%.2fM tok/s", a.TokensPerSecond()/1e6), met(a.TokensPerSecond() >= TargetAnalyzeTokS)})
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
	fmt.Fprintf(&b, "machine: %d cores, %s, %s %s/%s; load average %.2f at start, %.2f at end\n",
		m.Cores, orDash(m.CPU), m.GoVersion, m.OS, m.Arch, m.LoadStart[0], m.LoadEnd[0])
	if r.NoFileHard > 0 {
		fmt.Fprintf(&b, "open files: RLIMIT_NOFILE soft %d, hard %d (soft raised to hard)\n", r.NoFileSoft, r.NoFileHard)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	section := func(title string) {
		tw.Flush()
		fmt.Fprintf(&b, "\n%s\n", title)
	}

	if len(r.CPU) > 0 {
		section("1. CPU per streamed token (getrusage of the client process; server = the child's /proc CPU)")
		fmt.Fprintln(tw, "streams\trequests\tfailed\ttokens\twall\tclient CPU\tclient/token\tserver/token\t")
		for _, c := range r.CPU {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", c.Streams, c.Requests, c.Failed, c.Tokens,
				fmtDur(c.Wall), fmtDur(c.ClientCPU), fmtDur(c.ClientPerToken()), fmtDur(c.ServerPerToken()))
		}
	}
	if len(r.Hold) > 0 {
		section(fmt.Sprintf("2. Streams held open together for %v (opened at %g/s, one token every %v; tried in order until one fails)", r.Plan.HoldFor, r.Plan.HoldRate, r.Plan.HoldInterval))
		fmt.Fprintln(tw, "streams\tok\terrors\tpeak open\tall open together\theld\t")
		for _, h := range r.Hold {
			held := "no"
			if h.Held(r.Plan.HoldFor) {
				held = "yes"
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%s\t%s\t\n", h.Streams, h.OK, errorCounts(h.Errors), h.Peak, fmtDur(h.Together), held)
		}
		for _, h := range r.Hold {
			if h.Message != "" {
				tw.Flush()
				fmt.Fprintf(&b, "first error at %d streams: %s\n", h.Streams, h.Message)
			}
		}
	}
	if len(r.Stamp) > 0 {
		section(fmt.Sprintf("3. Timestamp error: arrival minus the simulator's send time, server pacing %v per token", r.Plan.StampPace))
		fmt.Fprintln(tw, "streams\tchunks\tfailed\tp50\tp99\tmax\tclient CPU/chunk\tserver CPU/chunk\t")
		for _, s := range r.Stamp {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", s.Streams, s.Chunks, s.Failed, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max),
				fmtDur(perToken(s.ClientCPU, int64(s.Chunks))), fmtDur(perToken(s.ServerCPU, int64(s.Chunks))))
		}
		writeStampSources(tw, r.Stamp)
	}
	if len(r.Sched) > 0 {
		section(fmt.Sprintf("4. Schedule precision: actual minus scheduled send time, open loop, constant arrivals for %v", r.Plan.SchedFor))
		fmt.Fprintln(tw, "rate/s\trequests\tfailed\tp50\tp99\tmax\tclient CPU/request\tserver CPU/request\t")
		for _, s := range r.Sched {
			fmt.Fprintf(tw, "%g\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", s.Rate, s.Requests, s.Failed, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max),
				fmtDur(perToken(s.ClientCPU, int64(s.Requests))), fmtDur(perToken(s.ServerCPU, int64(s.Requests))))
		}
	}
	if len(r.Size) > 0 {
		section("5. Trace size (zstd file bytes / output tokens)")
		fmt.Fprintln(tw, "trace\tbytes\ttokens\tbytes/token\t")
		for _, s := range r.Size {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t\n", s.What, s.Bytes, s.Tokens, s.PerToken())
		}
	}
	if a := r.Analysis; a != nil {
		section("6. Analysis speed (analyze.AnalyzeFiles + BuildTable on one trace file; peak heap in use above the baseline, sampled every 5 ms)")
		fmt.Fprintln(tw, "tokens\trequests\tfile\twall\ttokens/s\tCPU\ttokens/CPU-s\tpeak heap\t")
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.2fM\t%s\t%.2fM\t%s\t\n", a.Tokens, a.Requests, fmtBytes(uint64(a.FileBytes)), fmtDur(a.Elapsed),
			a.TokensPerSecond()/1e6, fmtDur(a.CPU), a.TokensPerCPUSecond()/1e6, fmtBytes(a.PeakHeap))
	}
	section("Targets")
	fmt.Fprintln(tw, "target\tfigure\tverdict\t")
	for _, v := range r.Verdicts() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", v.Target, v.Figure, v.Met)
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
