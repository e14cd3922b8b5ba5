package capacity

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"gonum.org/v1/gonum/stat/distuv"
)

// JudgeSamples decides one level from its rounds of samples, pooled:
// errors when more than MaxErrorRate of the requests failed; else, per
// term, fail when the term's interval lies wholly on the wrong side of its
// bound, pass when every term's lies on the right side, undecided
// otherwise. A latency term's interval is the order-statistic interval of
// its percentile (over successful requests); a share term's (goodput) is
// the Clopper-Pearson interval of the share of all requests that were good.
//
// With cfg.PerRound each round is one draw: a term's value in a round is
// the round's own percentile (or share, failed requests counted as not
// good), and the term's value and interval are the median over rounds
// and its order-statistic interval (see Config.PerRound).
func JudgeSamples(cfg Config, rounds [][]Sample) (Verdict, []TermResult) {
	if cfg.PerRound {
		return judgeRounds(cfg, rounds)
	}
	n, failed, good := 0, 0, 0
	values := map[string][]float64{}
	for _, r := range rounds {
		for _, sm := range r {
			n++
			if !sm.OK {
				failed++
				continue
			}
			if sm.Good {
				good++
			}
			for _, t := range cfg.SLO {
				if v, ok := sm.Values[t.Metric]; ok && !t.Share {
					values[t.Metric] = append(values[t.Metric], v)
				}
			}
		}
	}
	var out []TermResult
	for _, t := range cfg.SLO {
		tr := TermResult{Term: t.Text, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		if t.Share {
			if n > 0 {
				tr.Value = float64(good) / float64(n)
				tr.Lo, tr.Hi = ShareCI(good, n, cfg.Conf)
			}
		} else if xs := values[t.Metric]; len(xs) > 0 {
			tr.Value, tr.Lo, tr.Hi = quantileCI(xs, t.Q, cfg.Conf)
		}
		out = append(out, tr)
	}
	return verdict(cfg, out, failed, n), out
}

// decide is one term's side of its bound: fail when its interval lies
// wholly on the wrong side, pass when wholly on the right side (a NaN end,
// an interval not inside the sample, decides nothing).
func decide(t Term, tr TermResult) (fail, pass bool) {
	if t.Share {
		return t.beyond(tr.Hi), t.within(tr.Lo)
	}
	return t.beyond(tr.Lo), t.within(tr.Hi)
}

// RoundValue is a term's value in one round: the q-quantile (the
// ⌈q·k⌉-th smallest, the tables' rule) of the metric over the round's k
// successful requests, or the share of all its requests that were good.
// NaN when the round has none.
func RoundValue(t Term, round []Sample) float64 {
	if t.Share {
		if len(round) == 0 {
			return math.NaN()
		}
		good := 0
		for _, sm := range round {
			if sm.OK && sm.Good {
				good++
			}
		}
		return float64(good) / float64(len(round))
	}
	var xs []float64
	for _, sm := range round {
		if v, ok := sm.Values[t.Metric]; ok && sm.OK {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return xs[quantileAt(len(xs), t.Q)]
}

// quantileAt is the index of the q-quantile among k sorted values: the
// ⌈q·k⌉-th smallest, the tables' rule.
func quantileAt(k int, q float64) int {
	return min(k-1, max(0, int(math.Ceil(q*float64(k)))-1))
}

// quantileCI sorts xs (not empty) and returns their q-quantile with its
// distribution-free order-statistic interval at confidence conf; an end
// the sample cannot reach is NaN.
func quantileCI(xs []float64, q, conf float64) (v, lo, hi float64) {
	slices.Sort(xs)
	k := int64(len(xs))
	v, lo, hi = xs[quantileAt(len(xs), q)], math.NaN(), math.NaN()
	l, h := analyze.OrderCI(k, q, conf)
	if l >= 1 {
		lo = xs[l-1]
	}
	if h <= k {
		hi = xs[h-1]
	}
	return v, lo, hi
}

// judgeRounds is JudgeSamples for independent rounds (Config.PerRound).
// A round with no value for a latency term (every request failed) gives
// it none; its failures count in the error share, which stops the search
// long before a level's rounds could all fail.
func judgeRounds(cfg Config, rounds [][]Sample) (Verdict, []TermResult) {
	n, failed := 0, 0
	for _, r := range rounds {
		for _, sm := range r {
			n++
			if !sm.OK {
				failed++
			}
		}
	}
	var out []TermResult
	for _, t := range cfg.SLO {
		tr := TermResult{Term: t.Text, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		var xs []float64
		for _, r := range rounds {
			if x := RoundValue(t, r); !math.IsNaN(x) {
				xs = append(xs, x)
			}
		}
		if len(xs) > 0 {
			tr.Value, tr.Lo, tr.Hi = quantileCI(xs, 0.5, cfg.Conf) // the median over rounds
		}
		out = append(out, tr)
	}
	return verdict(cfg, out, failed, n), out
}

// verdict combines the terms' results (out[i] is cfg.SLO[i]'s): Errors when
// more than MaxErrorRate of the n requests failed, else Fail when a term
// fails, Undecided when one straddles its bound, Pass when all pass.
func verdict(cfg Config, out []TermResult, failed, n int) Verdict {
	if n > 0 && float64(failed)/float64(n) > cfg.MaxErrorRate {
		return Errors
	}
	v := Pass
	for i, t := range cfg.SLO {
		fail, pass := decide(t, out[i])
		switch {
		case fail:
			v = Fail
		case pass:
		case v == Pass:
			v = Undecided
		}
	}
	return v
}

// ShareCI is the two-sided Clopper-Pearson interval at level conf of a
// proportion with k successes in n trials (exact, never narrower than
// it should be).
func ShareCI(k, n int, conf float64) (lo, hi float64) {
	a := (1 - conf) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return lo, hi
}

// MinShareSamples is the fewest requests for which a probe where every
// request was good can show a share of at least p: the Clopper-Pearson
// lower end with k = n is (α/2)^(1/n), so n ≥ ln(α/2) / ln p.
func MinShareSamples(p, conf float64) int {
	return int(math.Ceil(math.Log((1-conf)/2) / math.Log(p)))
}

// Throughput is the aggregate output throughput of rounds: the mean over
// rounds of output tokens of the successful requests / (last end − first
// send) among them, tok/s.
func Throughput(rounds [][]Sample) float64 {
	sum, k := 0.0, 0
	for _, r := range rounds {
		var first, last time.Duration
		tokens, seen := 0, false
		for _, sm := range r {
			if !sm.OK {
				continue
			}
			if !seen || sm.Start < first {
				first = sm.Start
			}
			if !seen || sm.End > last {
				last = sm.End
			}
			seen = true
			tokens += sm.Tokens
		}
		if seen && last > first {
			sum += float64(tokens) / (last - first).Seconds()
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// KneeShare is the share of the highest aggregate throughput at which the
// knee is placed.
const KneeShare = 0.9

// Knee is where adding load stops adding aggregate throughput: the lowest
// probed level whose throughput reaches KneeShare of the highest probed
// throughput. It lies in (Lo, X]: Lo is the probed level just below it,
// whose throughput did not reach that share. Found is false when the
// highest level probed is the first to reach it (throughput still rising)
// or no probe measured any throughput.
type Knee struct {
	Found       bool
	X, Lo       float64
	TPS, MaxTPS float64
	Reason      string
}

// KneeOf finds the knee among the probes (levels that hit the error limit
// are left out).
func KneeOf(probes []Probe) Knee {
	var ps []Probe
	for _, p := range probes {
		if p.Verdict != Errors && p.TPS > 0 {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return Knee{Reason: "no probe measured a throughput"}
	}
	slices.SortFunc(ps, func(a, b Probe) int { return cmp.Compare(a.X, b.X) })
	k := Knee{}
	if len(ps) == 1 {
		k.X, k.TPS, k.MaxTPS = ps[0].X, ps[0].TPS, ps[0].TPS
		k.Reason = "one level probed: no curve to find a knee on"
		return k
	}
	for _, p := range ps {
		k.MaxTPS = math.Max(k.MaxTPS, p.TPS)
	}
	for i, p := range ps {
		if p.TPS >= KneeShare*k.MaxTPS {
			k.X, k.TPS = p.X, p.TPS
			if i > 0 {
				k.Lo = ps[i-1].X
			}
			if i == len(ps)-1 && len(ps) > 1 {
				k.Reason = "aggregate throughput was still rising at the highest level probed"
				return k
			}
			if i == 0 {
				k.Reason = "the lowest level probed already reaches it: the knee is at or below it"
				k.Found = true
				return k
			}
			k.Found = true
			return k
		}
	}
	return k
}
