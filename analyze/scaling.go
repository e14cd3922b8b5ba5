package analyze

import (
	"fmt"
	"math"
	"sort"

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

// fitExponent fits ln(metric) against ln(input length) over the runs'
// successful requests. ok is false with fewer than two input lengths.
func fitExponent(runs []*run, metric int) (Fit, bool) {
	by := map[int]*logStats{}
	for _, r := range runs {
		if r.phase.InputTokens <= 0 {
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
	if len(by) < 2 {
		return Fit{}, false
	}
	f := Fit{}
	for l := range by {
		f.Inputs = append(f.Inputs, l)
	}
	sort.Ints(f.Inputs)
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
	return f, true
}

// Scaling is how one metric of one label at one concurrency scales with
// input length: metric ∝ input_tokens^Exponent.
type Scaling struct {
	Label       string `json:"label"`
	Concurrency int    `json:"concurrency"`
	// Metric is the fitted per-request metric: ttft or prefill_tps.
	Metric   string `json:"metric"`
	Exponent Value  `json:"exponent"`
	// InputTokens are the input lengths fitted over.
	InputTokens []int `json:"input_tokens"`
}

// scalingMetrics are the per-request metrics whose exponents are fitted,
// with the registry name of each exponent.
var scalingMetrics = []struct{ metric, exponent string }{
	{"ttft", "ttft_exponent"},
	{"prefill_tps", "prefill_tps_exponent"},
}

// PrefillScaling fits, per label and concurrency that ran at two input
// lengths or more, how TTFT and prefill_tps scale with input length; the
// table's footnotes and the JSON document show it.
func (res *Result) PrefillScaling() []Scaling {
	type key struct {
		label string
		c     int
	}
	runs := map[key][]*run{}
	var order []key
	for _, r := range res.runs {
		k := key{r.trace.info.Label, r.phase.Concurrency}
		if _, ok := runs[k]; !ok {
			order = append(order, k)
		}
		runs[k] = append(runs[k], r)
	}
	// Labels in the order they came, concurrencies ascending within each.
	first := map[string]int{}
	for i, k := range order {
		if _, ok := first[k.label]; !ok {
			first[k.label] = i
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if a, b := first[order[i].label], first[order[j].label]; a != b {
			return a < b
		}
		return order[i].c < order[j].c
	})
	var out []Scaling
	for _, k := range order {
		for _, m := range scalingMetrics {
			if f, ok := fitExponent(runs[k], metricIndex[m.metric]); ok {
				out = append(out, Scaling{Label: k.label, Concurrency: k.c, Metric: m.metric, Exponent: f.Value, InputTokens: f.Inputs})
			}
		}
	}
	return out
}

// superlinearWarnings flags a TTFT that grows clearly faster than the
// prompt over a wide range of input lengths: prefill whose cost per token
// rises with the prompt (quadratic attention), which makes long prompts
// far slower than a linear extrapolation says.
func superlinearWarnings(res *Result) []Warning {
	var out []Warning
	scal := res.PrefillScaling()
	for _, s := range scal {
		if s.Metric != "ttft" || !(s.Exponent.Lo > superlinearLo) {
			continue
		}
		lo, hi := s.InputTokens[0], s.InputTokens[len(s.InputTokens)-1]
		if float64(hi) < superlinearRange*float64(lo) {
			continue
		}
		ev := map[string]any{
			"ttft_exponent": round3(s.Exponent.Value), "ttft_exponent_lo": round3(s.Exponent.Lo), "ttft_exponent_hi": round3(s.Exponent.Hi),
			"input_tokens": s.InputTokens, "requests": s.Exponent.N,
		}
		for _, p := range scal {
			if p.Metric == "prefill_tps" && p.Label == s.Label && p.Concurrency == s.Concurrency {
				ev["prefill_tps_exponent"] = round3(p.Exponent.Value)
			}
		}
		out = append(out, Warning{Code: WarnPrefillSuperlinear,
			Keys: map[string]any{KeyLabel: s.Label, KeyConcurrency: s.Concurrency},
			Message: fmt.Sprintf("TTFT grows as input^%.2f (95%% interval %.2f to %.2f) from %d to %d input tokens at concurrency %d: prefill slows down per token as prompts grow (quadratic attention?), so long prompts take far longer than a linear extrapolation says",
				s.Exponent.Value, s.Exponent.Lo, s.Exponent.Hi, lo, hi, s.Concurrency),
			Evidence: ev})
	}
	return out
}
