package analyze

import (
	"math"
	"sort"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gonum.org/v1/gonum/stat/distuv"
)

// How a latency scales with input length: a power law fitted by least
// squares on a log-log scale,
//
//	ln y_i = c + k·ln L_i + ε_i
//
// over every successful request i of a group (y its TTFT or prefill speed,
// L its phase's input length), the exponent k with the classical interval
// k ± t(0.975, n−2)·se(k), se(k)² = SSE / ((n−2)·Sxx). Why this interval:
// within one input length the requests scatter around the fit, and the
// interval says how well those points pin the slope down. It assumes the
// scatter is alike at every length (on a log scale TTFT's relative noise
// is) and that requests are independent; requests released together at a
// concurrency above 1 share a queue, so there the interval is narrower
// than a second sweep would show. The fit is deliberately simple: a fixed
// cost in TTFT (network, scheduling, the batch window) bends the curve
// flat at short inputs and so pulls k towards 0, never above the
// prefill's true exponent, which keeps the superlinear warning from firing
// on overhead. gonum supplies Student's t quantile; the sums are written
// out because the samples live in Dists (exact up to 16,384 values, then a
// histogram whose buckets stand for their geometric middles).

// superlinearLo is the lower end of TTFT's exponent interval above which
// prefill is said to grow faster than the prompt (prefill_superlinear),
// and superlinearRange the fewest-fold range of input lengths the fit must
// span: over a 2× range a fixed cost or noise moves a slope a lot, over
// 10× a quadratic prefill cannot hide. Linear prefill plus a fixed cost
// gives k ≤ 1; the margin of 0.2 leaves room for queueing that grows with
// the prompt (chunked prefill of a burst) without calling it attention.
const (
	superlinearLo    = 1.2
	superlinearRange = 10.0
)

// logStats are the count, mean and centred sum of squares of ln v over a
// set of positive samples; they merge without the samples (Chan et al.).
type logStats struct {
	n, mean, m2 float64
}

func (a *logStats) merge(b logStats) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		*a = b
		return
	}
	n := a.n + b.n
	d := b.mean - a.mean
	a.mean += d * b.n / n
	a.m2 += b.m2 + d*d*a.n*b.n/n
	a.n = n
}

// logStats of d's positive samples (a log of zero or a negative is
// undefined, and no TTFT or speed is either).
func (d *Dist) logStats() logStats {
	var s logStats
	if d.hist == nil {
		for _, v := range d.exact {
			if v > 0 {
				s.merge(logStats{n: 1, mean: math.Log(v)})
			}
		}
		return s
	}
	for i, c := range d.hist.pos.counts {
		if c > 0 {
			s.merge(logStats{n: float64(c), mean: (float64(d.hist.pos.off+i) + 0.5) * logGamma})
		}
	}
	return s
}

// Fit is a fitted exponent: Value is k with its 95% interval (±Inf sides
// with fewer than 3 requests) and N the requests behind it; Inputs are the
// input lengths fitted over, ascending.
type Fit struct {
	Value
	Inputs []int
}

// Range is the ratio of the longest input fitted over to the shortest.
func (f Fit) Range() float64 {
	if len(f.Inputs) < 2 || f.Inputs[0] <= 0 {
		return 0
	}
	return float64(f.Inputs[len(f.Inputs)-1]) / float64(f.Inputs[0])
}

// byInput collects the log statistics of one per-request metric per input
// length over the runs' successful requests.
func byInput(runs []*run, metric int) map[int]*logStats {
	by := map[int]*logStats{}
	for _, r := range runs {
		if r = firstTurns(r); r == nil || r.phase.InputTokens <= 0 {
			continue
		}
		s := r.dists[metric].logStats()
		if s.n == 0 {
			continue
		}
		if by[r.phase.InputTokens] == nil {
			by[r.phase.InputTokens] = &logStats{}
		}
		by[r.phase.InputTokens].merge(s)
	}
	return by
}

// firstTurns is the part of r whose prompts are the phase's input length:
// all of a run without sessions, the first turns of a multi-turn run (a
// later turn resends the conversation, longer and mostly cached, so its
// TTFT says nothing of how prefill scales), nil for a later turn's run.
func firstTurns(r *run) *run {
	switch {
	case r.turn >= 2:
		return nil
	case r.turns != nil:
		return r.turns[1]
	}
	return r
}

func sortedInputs(by map[int]*logStats) []int {
	out := make([]int, 0, len(by))
	for l := range by {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}

// fitExponent fits ln(metric) against ln(input length) over the runs'
// successful requests. ok is false with fewer than two input lengths.
func fitExponent(runs []*run, metric int) (Fit, bool) {
	// Most groups hold one input length: say so before taking any log.
	first, two := 0, false
	for _, r := range runs {
		if l := r.phase.InputTokens; l > 0 && first == 0 {
			first = l
		} else if l > 0 && l != first {
			two = true
			break
		}
	}
	if !two {
		return Fit{}, false
	}
	by := byInput(runs, metric)
	if len(by) < 2 {
		return Fit{}, false
	}
	return fitLengths(by, sortedInputs(by)), true
}

// fitLengths is the least-squares fit over the given input lengths (two
// or more, ascending) of by.
func fitLengths(by map[int]*logStats, inputs []int) Fit {
	f := Fit{Inputs: inputs}
	var n, sx, sy float64
	for _, l := range f.Inputs {
		s := by[l]
		n += s.n
		sx += s.n * math.Log(float64(l))
		sy += s.n * s.mean
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for _, l := range f.Inputs {
		s := by[l]
		dx, dy := math.Log(float64(l))-mx, s.mean-my
		sxx += s.n * dx * dx
		sxy += s.n * dx * dy
		syy += s.m2 + s.n*dy*dy
	}
	k := sxy / sxx
	f.Value = Value{Value: k, Lo: math.Inf(-1), Hi: math.Inf(1), N: int64(n)}
	if dof := n - 2; dof >= 1 {
		sse := math.Max(0, syy-k*sxy)
		se := math.Sqrt(sse / dof / sxx)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(1 - (1-Confidence)/2)
		f.Lo, f.Hi = k-t*se, k+t*se
	}
	return f
}

// steepest is the fit over the run of consecutive input lengths spanning
// at least superlinearRange whose interval's lower end is highest: where
// TTFT grows fastest over a range wide enough to tell. A fixed cost
// flattens the short end of a sweep (100 tokens on a GPU is all
// overhead), so a fit over the whole sweep can sit near 1 while the long
// end grows as the square; each window's own slope is still pulled down,
// never up, by that cost. ok is false when no window spans the range.
func steepest(by map[int]*logStats) (Fit, bool) {
	in := sortedInputs(by)
	var best Fit
	found := false
	for i := range in {
		for j := i + 1; j < len(in); j++ {
			if float64(in[j]) < superlinearRange*float64(in[i]) {
				continue
			}
			f := fitLengths(by, in[i:j+1])
			if !found || f.Lo > best.Lo {
				best, found = f, true
			}
		}
	}
	return best, found
}

// Scaling is how one metric of one label at one concurrency (or arrival
// rate) scales with input length: metric ∝ input_tokens^Exponent.
type Scaling struct {
	Label       string `json:"label"`
	Concurrency int    `json:"concurrency"`
	// Rate is the arrival rate (requests/s) of open-loop phases, which
	// have no concurrency; 0 otherwise.
	Rate float64 `json:"rate,omitempty"`
	// Metric is the fitted per-request metric: ttft or prefill_tps.
	Metric   string `json:"metric"`
	Exponent Value  `json:"exponent"`
	// InputTokens are the input lengths fitted over.
	InputTokens []int `json:"input_tokens"`
	// Steepest, for TTFT, is the fit over the consecutive input lengths
	// spanning 10× or more where TTFT grows fastest (the one
	// prefill_superlinear judges), when that is not the whole sweep.
	Steepest *Steepest `json:"steepest,omitempty"`
}

// Steepest is a fit over part of a sweep's input lengths.
type Steepest struct {
	Exponent    Value `json:"exponent"`
	InputTokens []int `json:"input_tokens"`
}

type scalingKey struct {
	label string
	c     int
	rate  float64 // open-loop phases have a rate instead of a concurrency
}

// where names the load a scaling fit was made at.
func (k scalingKey) where() string {
	if k.rate > 0 {
		return thousands.Sprintf("rate %g req/s", k.rate)
	}
	return thousands.Sprintf("concurrency %d", k.c)
}

func (k scalingKey) keys() map[string]any {
	if k.rate > 0 {
		return map[string]any{KeyLabel: k.label, KeyRate: k.rate}
	}
	return map[string]any{KeyLabel: k.label, KeyConcurrency: k.c}
}

// scalingGroups splits the runs by label and concurrency, labels in the
// order they came and concurrencies ascending within each.
func scalingGroups(res *Result) ([]scalingKey, map[scalingKey][]*run) {
	runs := map[scalingKey][]*run{}
	var order []scalingKey
	first := map[string]int{}
	for _, r := range res.runs {
		k := scalingKey{r.trace.info.Label, r.phase.Concurrency, r.phase.Rate}
		if _, ok := runs[k]; !ok {
			order = append(order, k)
		}
		if _, ok := first[k.label]; !ok {
			first[k.label] = len(first)
		}
		runs[k] = append(runs[k], r)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if a, b := first[order[i].label], first[order[j].label]; a != b {
			return a < b
		}
		if order[i].c != order[j].c {
			return order[i].c < order[j].c
		}
		return order[i].rate < order[j].rate
	})
	return order, runs
}

// PrefillScaling fits, per label and concurrency that ran at two input
// lengths or more, how TTFT and prefill_tps scale with input length; the
// table's footnotes and the JSON document show it.
func (res *Result) PrefillScaling() []Scaling {
	order, runs := scalingGroups(res)
	var out []Scaling
	for _, k := range order {
		for _, m := range []string{"ttft", "prefill_tps"} {
			by := byInput(runs[k], metricIndex[m])
			if len(by) < 2 {
				continue
			}
			in := sortedInputs(by)
			f := fitLengths(by, in)
			s := Scaling{Label: k.label, Concurrency: k.c, Rate: k.rate, Metric: m, Exponent: f.Value, InputTokens: f.Inputs}
			if st, ok := steepest(by); ok && m == "ttft" && len(st.Inputs) < len(in) {
				s.Steepest = &Steepest{Exponent: st.Value, InputTokens: st.Inputs}
			}
			out = append(out, s)
		}
	}
	return out
}

// superlinearWarnings flags a TTFT that grows clearly faster than the
// prompt over a wide range of input lengths: prefill whose cost per token
// rises with the prompt (quadratic attention), which makes long prompts
// far slower than a linear extrapolation says. It looks at every run of
// consecutive lengths spanning 10× or more (steepest), not only at the
// whole sweep, whose short end a fixed cost can flatten.
func superlinearWarnings(res *Result) []Warning {
	order, runs := scalingGroups(res)
	var out []Warning
	for _, k := range order {
		f, ok := steepest(byInput(runs[k], metricIndex["ttft"]))
		if !ok || !(f.Lo > superlinearLo) {
			continue
		}
		lo, hi := f.Inputs[0], f.Inputs[len(f.Inputs)-1]
		ev := map[string]any{
			"ttft_exponent": round3(f.Value.Value), "ttft_exponent_lo": round3(f.Lo), "ttft_exponent_hi": round3(f.Hi),
			"input_tokens": f.Inputs, "requests": f.N,
		}
		p := byInput(runs[k], metricIndex["prefill_tps"])
		all := true
		for _, l := range f.Inputs {
			all = all && p[l] != nil
		}
		if all {
			ev["prefill_tps_exponent"] = round3(fitLengths(p, f.Inputs).Value.Value)
		}
		out = append(out, Warning{Code: WarnPrefillSuperlinear,
			Keys: k.keys(),
			Message: thousands.Sprintf("TTFT grows as input^%.2f (95%% interval %.2f to %.2f) from %d to %d input tokens at %s: prefill slows down per token as prompts grow (quadratic attention?), so long prompts take far longer than a linear extrapolation says",
				f.Value.Value, f.Lo, f.Hi, lo, hi, k.where()),
			Evidence: ev})
	}
	return out
}

// thousands prints counts with thousands separators ("10,000").
var thousands = message.NewPrinter(language.English)
