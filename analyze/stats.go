package analyze

import (
	"math"
	"sort"
)

// The statistics here are the ones benchstat (golang.org/x/perf/benchmath)
// uses — a median with a distribution-free order-statistic interval, and
// the Mann-Whitney U test for "is A different from B" — written out rather
// than imported because of how the analysis holds its samples: a Dist is
// exact up to 16,384 values and then a histogram with ≤ 1% error, so that
// a 10 M-token trace is analysed in bounded memory. benchmath.Sample wants
// every value in a sorted slice, and its interval and U test read ranks
// from that slice; here the same ranks are read from the histogram
// (quantile at an order statistic's rank). The formulas are tested in
// stats_test.go on cases whose binomial and rank arithmetic is written out.

// Confidence is the level of every interval the analysis reports.
const Confidence = 0.95

// Alpha is the significance level below which two samples are reported as
// different; above it a comparison is marked "~".
const Alpha = 0.05

// orderCI returns 1-based order-statistic ranks l < h such that
// P(x(l) ≤ ξq ≤ x(h)) ≥ conf for n samples, splitting the excluded
// probability evenly between the tails. l < 1 or h > n means that side of
// the interval is unbounded with this many samples.
func orderCI(n int64, q, conf float64) (l, h int64) {
	tail := (1 - conf) / 2
	if n > 2000 {
		// Normal approximation to the binomial: exact sums over millions
		// of terms would cost more than they are worth at this size.
		z := normQuantile(1 - tail)
		sd := math.Sqrt(float64(n) * q * (1 - q))
		l = int64(math.Floor(float64(n)*q - z*sd))
		h = int64(math.Ceil(float64(n)*q+z*sd)) + 1
		return l, h
	}
	// B ~ Binomial(n, q) counts samples below the true quantile; the
	// quantile lies in [x(l), x(h)) when l ≤ B < h.
	pmf := binomPMF(int(n), q)
	// l: the largest rank with P(B < l) ≤ tail.
	cum := 0.0
	l = 0
	for k := 0; k <= int(n); k++ {
		if cum+pmf[k] > tail {
			l = int64(k)
			break
		}
		cum += pmf[k]
	}
	// h: the smallest rank with P(B ≥ h) ≤ tail.
	cum = 0
	h = n + 1
	for k := int(n); k >= 0; k-- {
		if cum+pmf[k] > tail {
			h = int64(k) + 1
			break
		}
		cum += pmf[k]
	}
	return l, h
}

func binomPMF(n int, p float64) []float64 {
	out := make([]float64, n+1)
	lp, lq := math.Log(p), math.Log1p(-p)
	lgn, _ := math.Lgamma(float64(n + 1))
	for k := 0; k <= n; k++ {
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(n - k + 1))
		out[k] = math.Exp(lgn - a - b + float64(k)*lp + float64(n-k)*lq)
	}
	return out
}

// normQuantile is the standard normal quantile function.
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// MannWhitneyP returns the two-sided p-value of the Mann-Whitney U test
// that a and b come from the same distribution: exact for small samples
// without ties, the normal approximation with tie and continuity
// corrections otherwise. It returns 1 when either sample is empty.
func MannWhitneyP(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	// Mid-ranks for ties; tieSum collects Σ(t³−t) for the variance.
	var r1, tieSum float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieSum += t*t*t - t
		}
		i = j
	}
	u1 := r1 - float64(n1*(n1+1))/2
	if !ties && n1*n2 <= 2500 {
		return exactUP(u1, n1, n2)
	}
	mu := float64(n1*n2) / 2
	n := float64(n1 + n2)
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u1-mu) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// exactUP is the two-sided p-value of U under the null hypothesis, by
// counting the arrangements of n1+n2 ranks that give each U (the classic
// recurrence c(u; n1, n2) = c(u−n2; n1−1, n2) + c(u; n1, n2−1)).
func exactUP(u float64, n1, n2 int) float64 {
	maxU := n1 * n2
	// f[j][u] for the current n1 row, rolling over n1 in two tables made
	// once: a table per row was 8.6 MB allocated per test at 32 × 32 (the
	// slow-down check's size, once per run), 7% of an analysis's CPU time
	// in garbage.
	table := func() [][]float64 {
		t := make([][]float64, n2+1)
		flat := make([]float64, (n2+1)*(maxU+1))
		for j := range t {
			t[j] = flat[j*(maxU+1) : (j+1)*(maxU+1)]
		}
		return t
	}
	prev, cur := table(), table()
	for j := range prev {
		prev[j][0] = 1 // n1 = 0: one arrangement, U = 0
	}
	for i := 1; i <= n1; i++ {
		for j := range cur {
			clear(cur[j])
		}
		cur[0][0] = 1
		for j := 1; j <= n2; j++ {
			for v := 0; v <= i*j; v++ {
				c := cur[j-1][v]
				if v-j >= 0 {
					c += prev[j][v-j]
				}
				cur[j][v] = c
			}
		}
		prev, cur = cur, prev
	}
	return twoSidedP(prev[n2], u)
}

// twoSidedP is the two-sided p-value of U = u from counts[v], the number of
// arrangements giving U = v: the share of them at least as far from the
// mean as u.
func twoSidedP(counts []float64, u float64) float64 {
	total := 0.0
	for _, c := range counts {
		total += c
	}
	mu := float64(len(counts)-1) / 2
	dev := math.Abs(u - mu)
	p := 0.0
	for v, c := range counts {
		if math.Abs(float64(v)-mu) >= dev-1e-9 {
			p += c
		}
	}
	return math.Min(1, p/total)
}

// OrderCI is orderCI for clients of the core (the capacity search decides
// each probe with the same distribution-free interval the tables show).
func OrderCI(n int64, q, conf float64) (l, h int64) { return orderCI(n, q, conf) }
