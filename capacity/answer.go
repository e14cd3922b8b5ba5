package capacity

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
)

// The search's load axes: closed-loop users, or open-loop requests per
// second.
const (
	AxisConcurrency = "concurrency"
	AxisRate        = "rate"
)

// ClosedRoundMeasured is a concurrency round's measured requests at c
// users: c·max(2, ⌈batch/c⌉) after the c warm-up requests (the first c
// by schedule order, one per user as the round starts), so a round holds
// at least batch measured requests (a round's p90 is then at least its
// 18th of 20). The users take the round's requests from one queue, each
// its next as its last ends, so each sends about max(2, ⌈batch/c⌉), not
// exactly (the engine model's rounds hand them out alike): the round
// mixes the start's clump (the second wave is sent as the first ends)
// with the steady loop after it. A round's length is then about
// 1 + max(2, ⌈batch/c⌉) of one user's requests, not batch/c + 1: a probe
// of 8 rounds stays near a minute at the profiles' pace for every c.
func ClosedRoundMeasured(c, batch int) int {
	if c < 1 {
		return batch
	}
	return c * max(2, (batch+c-1)/c)
}

// Answer is a search's outcome as it is shown to a person: the result,
// the axis it ran on, the SLO asked (before any simulator time scale),
// the configuration its probes were judged with (the SLO scaled) and
// that time scale (1: none).
type Answer struct {
	Result    *Result
	Axis      string
	SLO       SLO
	Search    Config
	TimeScale float64
}

// Level writes a load level: "6" users, or "2.5 req/s".
func Level(axis string, x float64) string {
	if axis == AxisRate {
		return strconv.FormatFloat(x, 'f', -1, 64) + " req/s"
	}
	return strconv.Itoa(int(x))
}

// String writes the SLO from its bounds (a scaled SLO's own text would
// still show the unscaled bound).
func (s SLO) String() string {
	var t []string
	for _, x := range s {
		if x.Share {
			t = append(t, x.Text)
			continue
		}
		t = append(t, x.Name()+x.op()+msText(x.Bound))
	}
	return strings.Join(t, ",")
}

// msText writes a bound of ms milliseconds as people write one, to the
// nanosecond: 500ms, 0.001ms, 2s, 60s (never Go's 1m0s or 1µs).
func msText(ms float64) string {
	ms = math.Round(ms*1e6) / 1e6
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', -1, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
}

// Name is the term's metric as the tables head it: "ttft_p90", "goodput".
func (t Term) Name() string {
	if t.Share {
		return t.Metric
	}
	return t.Metric + "_p" + strconv.FormatFloat(100*t.Q, 'f', -1, 64)
}

// show writes a term's value or interval end: "–" for none.
func (t Term) show(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if t.Share {
		return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
	}
	return analyze.FormatMs(v, false) + " ms"
}

// sortedProbes are the probes by level. Each level is one probe, so the
// order is the levels'; stable all the same, as the table was before.
func sortedProbes(r *Result) []Probe {
	probes := slices.Clone(r.Probes)
	slices.SortStableFunc(probes, func(a, b Probe) int { return cmp.Compare(a.X, b.X) })
	return probes
}

// WriteText writes the probes' table, the answer, the knee and what the
// search cost against a full sweep.
func (a Answer) WriteText(w io.Writer) {
	r, sc := a.Result, a.Search
	fmt.Fprintf(w, "SLO: %s", a.SLO)
	if a.TimeScale != 1 {
		fmt.Fprintf(w, " (simulator time scale %g: bounds scaled alike to %s; latencies below are at that scale)", a.TimeScale, sc.SLO)
	}
	fmt.Fprintf(w, "\n\n")
	unit := "users"
	if a.Axis == AxisRate {
		unit = "req/s"
	}
	fmt.Fprintf(w, "%-8s %8s %6s  %-9s", unit, "requests", "failed", "verdict")
	for _, t := range sc.SLO {
		fmt.Fprintf(w, "  %-30s", t.Name()+" [99% interval]")
	}
	fmt.Fprintf(w, "  %s\n", "aggregate tok/s")
	probes := sortedProbes(r)
	for _, p := range probes {
		fmt.Fprintf(w, "%-8s %8d %6d  %-9s", strconv.FormatFloat(p.X, 'f', -1, 64), p.Requests, p.Failed, p.Verdict)
		for i, t := range sc.SLO {
			cell := "–"
			if i < len(p.Terms) {
				tr := p.Terms[i]
				cell = fmt.Sprintf("%s [%s, %s]", t.show(tr.Value), t.show(tr.Lo), t.show(tr.Hi))
			}
			fmt.Fprintf(w, "  %-30s", cell)
		}
		fmt.Fprintf(w, "  %.0f\n", p.TPS)
	}
	fmt.Fprintln(w)
	a.writeVerdict(w, probes)
	a.writeCost(w, len(probes))
}

// writeVerdict writes the answer, the knee and which limit comes first.
func (a Answer) writeVerdict(w io.Writer, probes []Probe) {
	r, sc := a.Result, a.Search
	what := "max concurrency meeting the SLO"
	if a.Axis == AxisRate {
		what = "max request rate meeting the SLO"
	}
	num := func(x float64) string { return Level(a.Axis, x) }
	interval := func() string {
		if r.Lo == r.Hi {
			return num(r.Lo)
		}
		if a.Axis == AxisRate {
			return fmt.Sprintf("%g–%g req/s", r.Lo, r.Hi)
		}
		return fmt.Sprintf("%d–%d", int(r.Lo), int(r.Hi))
	}
	switch r.Outcome {
	case Found:
		fmt.Fprintf(w, "%s: %s (95%% interval %s)\n", what, num(r.Answer), interval())
		for _, p := range probes {
			if p.X == r.Answer {
				fmt.Fprintf(w, "  at %s:", num(p.X))
				for i, t := range sc.SLO {
					if i < len(p.Terms) {
						fmt.Fprintf(w, " %s %s,", t.Name(), t.show(p.Terms[i].Value))
					}
				}
				fmt.Fprintf(w, " aggregate %.0f tok/s\n", p.TPS)
			}
		}
	case NoneMeets:
		fmt.Fprintf(w, "%s: none in the range (%s)\n", what, r.Reason)
	case AllMeet:
		fmt.Fprintf(w, "%s: at least %s, the top of the range (%s); raise --range to find the limit\n", what, num(r.Answer), r.Reason)
	case Budget:
		best := "best so far " + num(r.Answer)
		if r.Lo == 0 {
			// No probe passed: the range's low end is no answer yet.
			best = "no level shown to meet it yet"
		}
		fmt.Fprintf(w, "%s: could not determine (%s); it lies in %s (%s)\n", what, r.Reason, interval(), best)
	case NoDecision:
		fmt.Fprintf(w, "%s: could not determine: %s; they rule out no level of the tested range %s (best guess by point estimates %s)\n", what, r.Reason, interval(), num(r.Answer))
	case ErrorsHit:
		fmt.Fprintf(w, "%s: could not determine: errors came first: %s (limit %g%% per probe)", what, r.Reason, 100*sc.MaxErrorRate)
		if r.Answer >= sc.Lo && r.Lo >= sc.Lo {
			fmt.Fprintf(w, "; the SLO held up to %s", num(r.Lo))
		}
		fmt.Fprintln(w)
	}
	k := r.Knee
	switch {
	case k.Found && k.Lo > 0:
		fmt.Fprintf(w, "knee of aggregate throughput: %s (between %s and %s): %.0f tok/s, %.0f%% of the highest probed (%.0f tok/s)\n",
			num(k.X), num(k.Lo), num(k.X), k.TPS, 100*k.TPS/k.MaxTPS, k.MaxTPS)
	case k.Found:
		fmt.Fprintf(w, "knee of aggregate throughput: at or below %s (%s): %.0f tok/s\n", num(k.X), k.Reason, k.TPS)
	default:
		fmt.Fprintf(w, "knee of aggregate throughput: not found (%s)\n", k.Reason)
	}
	// Which limit comes first: when the knee lies below the SLO's answer,
	// the server stops adding throughput before latency binds; load past
	// the knee buys queueing, not tokens.
	if k.Found && k.Lo > 0 && (r.Outcome == Found || r.Outcome == AllMeet) && k.X < r.Answer {
		fmt.Fprintf(w, "the server saturates first: aggregate throughput stops rising at the knee (%s), below the SLO's limit (%s); load past the knee adds waiting, not tokens\n", num(k.X), num(r.Answer))
	}
}

// writeCost writes how many levels and requests the search took, beside
// what a full sweep of the range would at the same confidence.
func (a Answer) writeCost(w io.Writer, probed int) {
	r, sc := a.Result, a.Search
	sweep := 0
	if a.Axis == AxisConcurrency {
		// The range is at most live.MaxUsers: the CLI's --range and a
		// trace's header are refused past it.
		if rc, err := sc.Resolve(); err == nil {
			// The same per-level confidence: every level's probe at its
			// fewest rounds (8 at 99% when rounds are judged on their
			// own, one pooled batch before that).
			for c := int(rc.Lo); c <= int(rc.Hi); c++ {
				if rc.PerRound {
					sweep += MinRounds(rc.Conf) * ClosedRoundMeasured(c, rc.Batch)
				} else {
					sweep += rc.Batch
				}
			}
		}
	}
	levels := "levels"
	if probed == 1 {
		levels = "level"
	}
	fmt.Fprintf(w, "searched %d %s with %s measured requests", probed, levels, analyze.GroupDigits(int64(r.Requests)))
	if r.Elapsed > 0 {
		fmt.Fprintf(w, " in %.1fs", r.Elapsed.Seconds())
	}
	if sweep > 0 {
		fmt.Fprintf(w, " (a full %g..%g sweep at the same per-level confidence: %s)", sc.Lo, sc.Hi, analyze.GroupDigits(int64(sweep)))
	}
	fmt.Fprintln(w)
}

// Lines are the answer's own lines, each named by the trace it came from
// and the SLO asked: the answer or why there is none, the knee, and the
// saturation remark (what analyze's csv mode and the report's summary
// show without the table).
func (a Answer) Lines(name string) []string {
	var b strings.Builder
	a.WriteText(&b)
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "max ") || strings.HasPrefix(l, "knee ") || strings.HasPrefix(l, "the server saturates") {
			lines = append(lines, "capacity ("+name+", SLO "+a.SLO.String()+"): "+l)
		}
	}
	return lines
}

// Note is the answer in one line, under a chart.
func (a Answer) Note() string {
	r := a.Result
	unit := " users"
	if a.Axis == AxisRate {
		unit = " req/s"
	}
	switch r.Outcome {
	case Found:
		return fmt.Sprintf("Answer: %g%s (95%% interval %g–%g).", r.Answer, unit, r.Lo, r.Hi)
	case AllMeet:
		return fmt.Sprintf("Every level up to %g%s meets the SLO.", r.Answer, unit)
	case NoneMeets:
		return "No level in the range meets the SLO."
	case NoDecision:
		return fmt.Sprintf("Could not determine: %s; they rule out no level of the tested range %g–%g%s.", r.Reason, r.Lo, r.Hi, unit)
	}
	return fmt.Sprintf("Could not determine: %s; the capacity lies in %g–%g%s.", r.Reason, r.Lo, r.Hi, unit)
}
