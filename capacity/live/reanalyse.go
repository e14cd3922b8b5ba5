package live

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/trace"
)

// Reanalysis is a capacity trace judged again.
type Reanalysis struct {
	*capacity.Result
	Header trace.Header
	Axis   string
	// Search is the configuration the probes were judged with (the SLO
	// scaled by the trace's time scale).
	Search    capacity.Config
	TimeScale float64
	// Partial is true when the trace ended early (a run that crashed).
	Partial bool
}

// NotResolved is the reason when a trace's probes do not bracket the
// boundary for the SLO asked.
const NotResolved = "the trace's probes do not bracket the boundary for this SLO to the resolution: run the search for it"

// Reanalyse reads a capacity trace and answers for slo (nil: the trace's
// own SLO) without sending a request: each level's rounds are judged
// again by the trace's rule (each round one draw, or pooled for a trace
// written before capacity_rounds), and the answer is decided as the search decides it
// (capacity.Evaluate). good, when not zero, replaces the trace's goodput
// bounds.
func Reanalyse(path string, slo capacity.SLO, good analyze.SLO) (*Reanalysis, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	o := h.Options
	axis := o[OptAxis]
	if axis == "" {
		return nil, fmt.Errorf("%s is not a capacity trace (its header has no %s): give the trace 'llmreplay capacity' wrote", path, OptAxis)
	}
	num := func(k string) (float64, error) {
		v, err := strconv.ParseFloat(o[k], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: header option %s %q is not a number", path, k, o[k])
		}
		return v, nil
	}
	var cfg capacity.Config
	lo, hi, ok := strings.Cut(o[OptRange], ":")
	if cfg.Lo, err = strconv.ParseFloat(lo, 64); err != nil || !ok {
		return nil, fmt.Errorf("%s: header option %s %q is not LOW:HIGH", path, OptRange, o[OptRange])
	}
	if cfg.Hi, err = strconv.ParseFloat(hi, 64); err != nil {
		return nil, fmt.Errorf("%s: header option %s %q is not LOW:HIGH", path, OptRange, o[OptRange])
	}
	// The header is input like any other: a range no search could have
	// run (the concurrency axis stops at MaxUsers) is refused, not looped
	// over.
	if !(cfg.Lo > 0) || !(cfg.Hi >= cfg.Lo) || math.IsInf(cfg.Hi, 0) || (axis == AxisConcurrency && cfg.Hi > MaxUsers) {
		return nil, fmt.Errorf("%s: header option %s %q is no range a search runs (0 < LOW <= HIGH, at most %d users)", path, OptRange, o[OptRange], MaxUsers)
	}
	if cfg.Resolution, err = num(OptResolution); err != nil {
		return nil, err
	}
	if cfg.Conf, err = num(OptConf); err != nil {
		return nil, err
	}
	if cfg.MaxErrorRate, err = num(OptMaxErrors); err != nil {
		return nil, err
	}
	scale, err := num(OptTimeScale)
	if err != nil {
		return nil, err
	}
	cfg.Integer = axis == AxisConcurrency
	// A trace made before rounds were judged on their own (rate axis:
	// before capacity_rounds; concurrency axis: likewise, later) pooled
	// them; it is re-decided as it was decided.
	cfg.PerRound = o[OptRounds] != ""
	own := slo == nil
	if slo == nil {
		if slo, err = capacity.ParseSLO(o[OptSLO]); err != nil {
			return nil, fmt.Errorf("%s: the trace's SLO: %v", path, err)
		}
	}
	if good == (analyze.SLO{}) {
		if good, err = analyze.ParseSLO(o[OptGoodput]); err != nil {
			return nil, fmt.Errorf("%s: the trace's goodput bounds: %v", path, err)
		}
	}
	cfg.SLO = slo.Scaled(scale)
	// Resolve fills what the header does not hold (Batch, rounds); a
	// p99 SLO asked of p90-sized probes is not refused: its intervals
	// stay open and the probes undecided, which the answer says.
	full := cfg
	full.Batch = 1 << 30
	if _, err := full.Resolve(); err != nil {
		return nil, err
	}
	cfg.Batch = 1
	if b := closedRuleBatch(o[OptRounds]); axis == AxisConcurrency && b > 0 {
		cfg.Batch = b // the round's size, for the sweep it is compared with
	}
	if !cfg.PerRound {
		cfg.MaxRounds = capacity.DefaultMaxRounds
	}
	if c, err := cfg.Resolve(); err == nil && cfg.PerRound {
		cfg = c // the rounds a probe runs, for the sweep it is compared with
	}

	type level struct {
		x      float64
		rounds map[int][]*trace.Record
	}
	levels := map[float64]*level{}
	phaseX := map[int]float64{}
	for _, ph := range h.Phases {
		x := float64(ph.Concurrency)
		if axis == AxisRate {
			x = ph.Rate
		}
		phaseX[ph.Index] = x
		if levels[x] == nil {
			levels[x] = &level{x: x, rounds: map[int][]*trace.Record{}}
		}
		levels[x].rounds[ph.Index] = nil
	}
	for r.Scan() {
		rec := r.Record().Clone()
		x, ok := phaseX[rec.Phase]
		if !ok {
			continue
		}
		levels[x].rounds[rec.Phase] = append(levels[x].rounds[rec.Phase], rec)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	var probes []capacity.Probe
	for _, lv := range levels {
		pr := capacity.Probe{X: lv.x}
		var idx []int
		for i := range lv.rounds {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			s, err := Samples(h, lv.rounds[i], good, scale)
			if err != nil {
				return nil, err
			}
			if len(s) == 0 {
				continue
			}
			pr.Samples = append(pr.Samples, s)
			pr.Rounds++
			pr.Requests += len(s)
			for _, sm := range s {
				if !sm.OK {
					pr.Failed++
				}
			}
		}
		if pr.Rounds == 0 {
			continue
		}
		pr.Verdict, pr.Terms = capacity.JudgeSamples(cfg, pr.Samples)
		pr.TPS = capacity.Throughput(pr.Samples)
		probes = append(probes, pr)
	}
	slices.SortFunc(probes, func(a, b capacity.Probe) int { return cmp.Compare(a.X, b.X) })
	// Why the probes may not bracket the boundary: for the trace's own
	// SLO, what ended the search (its budget, a stop or crash); for
	// another SLO, that its probes were placed for the first.
	reason := NotResolved
	switch {
	case own && (o[OptOutcome] == string(capacity.Budget) || o[OptOutcome] == string(capacity.NoDecision)):
		reason = capacity.BudgetReason + "; 'capacity --resume' continues the search"
	case o[OptOutcome] == "" || o[OptOutcome] == OutcomeStopped:
		reason = "the trace ends before the search did (a run that was stopped or crashed): " + NotResolved
	}
	res := capacity.Evaluate(cfg, probes, reason)
	if math.IsNaN(res.Answer) {
		res.Answer = 0
	}
	return &Reanalysis{Result: res, Header: h, Axis: axis, Search: cfg, TimeScale: scale, Partial: r.Truncated()}, nil
}

// closedRuleBatch reads the batch out of a ClosedRoundRule text (0 when
// the text is not one).
func closedRuleBatch(rule string) int {
	_, rest, ok := strings.Cut(rule, "ceil(")
	if !ok {
		return 0
	}
	num, _, ok := strings.Cut(rest, "/C)")
	if !ok {
		return 0
	}
	b, err := strconv.Atoi(num)
	if err != nil || b < 1 {
		return 0
	}
	return b
}
