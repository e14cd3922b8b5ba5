package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Any percentile: a per-request or per-token metric takes _pX for any X
// above 0 and below 100 (ttft_p95, itl_p75, e2e_p99.9). The statistics
// every group computes anyway are standardStats; the others are computed
// for the names a caller asks for (Result.Want), so the JSON document of
// an analysis that asked for nothing new stays the same.

// ParsePercentile reads a percentile statistic ("p95", "p99.9") and
// returns its quantile (0.95, 0.999). A percentile is written in its
// shortest form: p5, not p05 (GuideLLM's p05 is the 5th, its p001 the
// 0.1th; here those are p5 and p0.1), and p99.9, not p99.90.
func ParsePercentile(stat string) (q float64, ok bool) {
	if len(stat) < 2 || stat[0] != 'p' {
		return 0, false
	}
	num := stat[1:]
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" || !allDigits(whole) || (len(whole) > 1 && whole[0] == '0') {
		return 0, false
	}
	if hasFrac && (frac == "" || !allDigits(frac) || frac[len(frac)-1] == '0') {
		return 0, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0 && v < 100) {
		return 0, false
	}
	// The quantile is read from the decimal text shifted two places
	// ("99.9" → "0.999"), not computed as v/100: GuideLLM compares
	// cumulative probabilities with the literal 0.999, and 99.9/100 is
	// not always the same double.
	q, err = strconv.ParseFloat(shiftDecimal(whole, frac), 64)
	if err != nil {
		return 0, false
	}
	return q, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// shiftDecimal writes whole.frac / 100 as a decimal text: "95","" →
// "0.95"; "99","9" → "0.999"; "5","" → "0.05".
func shiftDecimal(whole, frac string) string {
	for len(whole) < 2 {
		whole = "0" + whole
	}
	return whole[:len(whole)-2] + "." + whole[len(whole)-2:] + frac
}

// percentileError is LookupMetric's answer to a statistic that looks like
// a percentile but is not written as one.
func percentileError(m *Metric, stat string) error {
	return fmt.Errorf("metric %s has no statistic %q: a percentile is p followed by a number above 0 and below 100 in its shortest form, e.g. %s_p95 or %s_p99.9", m.Name, stat, m.Name, m.Name)
}

// HasPercentiles reports whether m takes any _pX.
func (m *Metric) HasPercentiles() bool { return m.Scope == PerRequest || m.Scope == PerToken }

// Percentile methods of the definition sets.
type pctMode int

const (
	// pctLinear: linear interpolation between order statistics, numpy's
	// default (np.percentile, np.median), as vLLM, SGLang and AIPerf
	// report them.
	pctLinear pctMode = iota
	// pctGuide03: GuideLLM 0.3's nearest rank: samples sorted by value,
	// each with probability weight/Σweights, and the first value whose
	// floating-point cumulative probability reaches p
	// (DistributionSummary.from_distribution_function).
	pctGuide03
	// pctGuide08: GuideLLM 0.8's: equal values combined first (their
	// weights summed), then the same search (Percentiles.from_pdf,
	// np.searchsorted on the cumulative probabilities).
	pctGuide08
)

// peerQuantile is the q-quantile of d by the set's method; linear
// interpolation is Dist.Quantile itself.
func (d *Dist) peerQuantile(q float64, mode pctMode) float64 {
	if mode == pctLinear || d.n == 0 {
		return d.Quantile(q)
	}
	if d.hist != nil {
		// Past the exact cap: the first bucket whose cumulative count
		// reaches q·n (the histogram's own ≤1% error).
		return d.clamp(d.hist.atRank(uint64(max(0, math.Ceil(q*float64(d.n))-1))))
	}
	vals, wts := d.weighted()
	return nearestRank(vals, wts, q, mode == pctGuide08)
}

// weighted returns the exact samples sorted by value with their weights
// (1 each for Add and AddN, which store copies).
func (d *Dist) weighted() ([]float64, []float64) {
	if d.wexact != nil {
		sortWeighted(d.wexact)
		vals := make([]float64, len(d.wexact))
		wts := make([]float64, len(d.wexact))
		for i, s := range d.wexact {
			vals[i], wts[i] = s.v, s.w
		}
		return vals, wts
	}
	vals := d.sorted()
	wts := make([]float64, len(vals))
	for i := range wts {
		wts[i] = 1
	}
	return vals, wts
}

// nearestRank is GuideLLM's percentile of sorted values with weights:
// probabilities w/Σw, accumulated in floating point in value order, and
// the first value whose cumulative probability is at least q. combine
// first sums the weights of equal values (0.8). When rounding keeps every
// cumulative probability below q, 0.3 (np.argmax of an all-false mask)
// answers the smallest value and 0.8 (searchsorted past the end) has no
// answer; the largest is returned then.
func nearestRank(vals, wts []float64, q float64, combine bool) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	if combine {
		var v2, w2 []float64
		for i, v := range vals {
			if n := len(v2); n > 0 && v2[n-1] == v {
				w2[n-1] += wts[i]
				continue
			}
			v2, w2 = append(v2, v), append(w2, wts[i])
		}
		vals, wts = v2, w2
	}
	total := pairwiseSum(wts)
	cum := 0.0
	for i, v := range vals {
		cum += wts[i] / total
		if cum >= q {
			return v
		}
	}
	if combine {
		return vals[len(vals)-1]
	}
	return vals[0]
}

// pairwiseSum adds xs the way numpy's np.sum does for float64 (blocks of
// 8 accumulators up to 128 elements, halves above): for the integer
// weights summed here it is exact either way, and the same double as
// numpy's otherwise.
func pairwiseSum(xs []float64) float64 {
	n := len(xs)
	switch {
	case n < 8:
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], xs[:8])
		i := 8
		for ; i+8 <= n; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += xs[i+j]
			}
		}
		s := (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += xs[i]
		}
		return s
	}
	h := n / 2
	h -= h % 8
	return pairwiseSum(xs[:h]) + pairwiseSum(xs[h:])
}

// wsample is one weighted sample: GuideLLM weights each request's TPOT by
// its output tokens and its ITL by them minus one.
type wsample struct{ v, w float64 }

func sortWeighted(s []wsample) {
	if !sort.SliceIsSorted(s, func(i, j int) bool { return s[i].v < s[j].v }) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].v < s[j].v })
	}
}
