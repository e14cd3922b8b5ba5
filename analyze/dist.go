package analyze

import (
	"math"
	"sort"
	"sync/atomic"
)

// exactCap is how many samples a Dist keeps exactly before it folds them
// into its histogram. 16,384 float64 values are 128 KiB: enough for the
// per-request metrics of nearly any run, while per-token samples (one per
// output token) switch to the histogram early, so even a trace of hundreds
// of runs stays within tens of megabytes.
const exactCap = 1 << 14

// histGamma is the ratio between histogram bucket bounds. A value is
// reported as the geometric middle of its bucket, so the relative error of
// any quantile read from the histogram is at most (γ−1)/(γ+1) < 1%.
const histGamma = 1.02

var logGamma = math.Log(histGamma)

// Dist accumulates a distribution of non-weighted or weighted samples in
// bounded memory: exact while it holds at most exactCap samples, a
// log-bucket histogram (mergeable, ≤1% relative error) after that.
type Dist struct {
	exact []float64
	// wexact holds weighted samples (AddWeighted) instead of exact: one
	// entry per sample whatever its weight, so a request's TPOT weighted
	// by its 256 tokens is one entry, not 256 copies.
	wexact []wsample
	hist   *hist
	n      int64
	sum    float64
	min    float64
	max    float64
}

// Add records v once.
func (d *Dist) Add(v float64) { d.AddN(v, 1) }

// AddN records v with weight k (k samples of the same value), as a chunk
// carrying k tokens contributes k inter-token samples.
func (d *Dist) AddN(v float64, k int) {
	// v−v is 0 for every finite v and NaN for NaN and ±Inf: one test for
	// both, on the path every streamed token takes twice.
	if k <= 0 || v-v != 0 {
		return
	}
	d.count(v, k)
	if d.hist == nil {
		if len(d.exact)+k <= exactCap {
			for i := 0; i < k; i++ {
				d.exact = append(d.exact, v)
			}
			return
		}
		d.fold()
	}
	d.hist.add(v, uint64(k))
}

// count takes k samples of v into the exact statistics (n, sum, min, max)
// that both modes keep.
func (d *Dist) count(v float64, k int) {
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n += int64(k)
	d.sum += v * float64(k)
}

func (d *Dist) fold() {
	d.hist = &hist{}
	for _, x := range d.exact {
		d.hist.add(x, 1)
	}
	for _, s := range d.wexact {
		d.hist.add(s.v, uint64(s.w))
	}
	d.exact, d.wexact = nil, nil
}

// AddWeighted records v once with weight w (a whole number of tokens):
// it counts as w samples in every statistic, and the set's percentile
// method sees it as one entry of weight w, as GuideLLM weighs it. A Dist
// takes either AddWeighted or Add/AddN samples, not both.
func (d *Dist) AddWeighted(v float64, w int) {
	if w <= 0 || v-v != 0 {
		return
	}
	d.count(v, w)
	if d.hist == nil {
		if len(d.wexact) < exactCap {
			d.wexact = append(d.wexact, wsample{v, float64(w)})
			return
		}
		d.fold()
	}
	d.hist.add(v, uint64(w))
}

// Merge adds every sample of o to d.
func (d *Dist) Merge(o *Dist) {
	if o == nil || o.n == 0 {
		return
	}
	if d.n == 0 || o.min < d.min {
		d.min = o.min
	}
	if d.n == 0 || o.max > d.max {
		d.max = o.max
	}
	d.n += o.n
	d.sum += o.sum
	if d.hist == nil && o.hist == nil && len(d.exact)+len(o.exact) <= exactCap && len(d.wexact)+len(o.wexact) <= exactCap {
		d.exact = append(d.exact, o.exact...)
		d.wexact = append(d.wexact, o.wexact...)
		return
	}
	if d.hist == nil {
		d.fold()
	}
	if o.hist != nil {
		d.hist.merge(o.hist)
	} else {
		for _, x := range o.exact {
			d.hist.add(x, 1)
		}
		for _, s := range o.wexact {
			d.hist.add(s.v, uint64(s.w))
		}
	}
}

// N is the number of samples (sum of weights).
func (d *Dist) N() int64 { return d.n }

// Exact reports whether every sample is still held exactly.
func (d *Dist) Exact() bool { return d.hist == nil }

// Mean is the arithmetic mean (exact even in histogram mode).
func (d *Dist) Mean() float64 {
	if d.n == 0 {
		return math.NaN()
	}
	return d.sum / float64(d.n)
}

// Min and Max are exact in both modes.
func (d *Dist) Min() float64 { return nanIfEmpty(d.n, d.min) }

// Max is the largest sample.
func (d *Dist) Max() float64 { return nanIfEmpty(d.n, d.max) }

func nanIfEmpty(n int64, v float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	return v
}

// sorted returns the exact samples sorted (sorting in place is fine: order
// carries no meaning inside one accumulator).
func (d *Dist) sorted() []float64 {
	if !sort.Float64sAreSorted(d.exact) {
		sort.Float64s(d.exact)
	}
	return d.exact
}

// Quantile returns the q-quantile: linear interpolation between order
// statistics when exact (numpy's default, which vLLM and SGLang report),
// the bucket middle in histogram mode.
func (d *Dist) Quantile(q float64) float64 {
	if d.n == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return d.min
	}
	if q >= 1 {
		return d.max
	}
	if d.wexact != nil {
		// As if every sample were its weight's copies: numpy's position
		// q·(n−1) among them.
		pos := q * float64(d.n-1)
		i := int64(math.Floor(pos))
		lo := d.atOrder(i + 1)
		if i+1 >= d.n {
			return lo
		}
		return lo + (pos-float64(i))*(d.atOrder(i+2)-lo)
	}
	if d.hist == nil {
		return interp(d.sorted(), q*float64(len(d.exact)-1))
	}
	return d.clamp(d.hist.atRank(uint64(math.Round(q * float64(d.n-1)))))
}

func (d *Dist) clamp(v float64) float64 { return math.Max(d.min, math.Min(d.max, v)) }

// interp reads a sorted sample at a fractional 0-based position.
func interp(s []float64, pos float64) float64 {
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// QuantileCI returns the q-quantile with a distribution-free confidence
// interval from order statistics: the ranks l and h are chosen so that the
// binomial probability of the true quantile lying outside [x(l), x(h)] is
// at most 1−conf, split evenly. With too few samples a bound is ±Inf, as
// benchstat reports it. The center is Quantile(q).
func (d *Dist) QuantileCI(q, conf float64) (center, lo, hi float64) {
	center = d.Quantile(q)
	if d.n == 0 {
		return center, math.NaN(), math.NaN()
	}
	l, h := orderCI(d.n, q, conf)
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = d.atOrder(l)
	}
	if h <= d.n {
		hi = d.atOrder(h)
	}
	return center, lo, hi
}

// atOrder returns the k-th smallest sample (1-based).
func (d *Dist) atOrder(k int64) float64 {
	if d.wexact != nil {
		sortWeighted(d.wexact)
		var c float64
		for _, s := range d.wexact {
			c += s.w
			if float64(k) <= c {
				return s.v
			}
		}
		return d.max
	}
	if d.hist == nil {
		return d.sorted()[k-1]
	}
	return d.clamp(d.hist.atRank(uint64(k - 1)))
}

// Values returns a copy of the exact samples, or nil in histogram mode
// and for weighted samples.
func (d *Dist) Values() []float64 {
	if d.hist != nil || d.wexact != nil {
		return nil
	}
	return append([]float64(nil), d.sorted()...)
}

// hist is a log-bucket histogram over positive values, a mirrored one over
// negative values, and a zero count. Buckets are dense slices with an offset
// so adding a sample costs a log and an increment.
type hist struct {
	pos, neg buckets
	zero     uint64
}

type buckets struct {
	off    int
	counts []uint64
}

// bucketOf is the bucket of v > 0: ⌊ln v / ln γ⌋. Computed with math.Log
// it was most of the analysis's time (two histogram samples per streamed
// token: itl and itl_chunk), so it is read from a table where the table
// knows the answer for sure, and computed exactly elsewhere: same bucket
// either way (bucketExact is the definition; TestBucketTable holds the two
// together).
func bucketOf(v float64) int {
	bits := math.Float64bits(v)
	if row := bucketRows[bits>>52&0x7ff].Load(); row != nil {
		if b := row[bits>>(52-cellBits)&(cells-1)]; b != mixedCell {
			return int(b)
		}
		return bucketExact(v)
	}
	return bucketSlow(v, bits)
}

func bucketExact(v float64) int { return int(math.Floor(math.Log(v) / logGamma)) }

// The bucket table: for each binary exponent of a float64 (its top 11 bits
// after the sign) a row of cells, each the values sharing the next cellBits
// bits of the mantissa, 1/4096 of an octave. A cell holds the bucket of all
// its values when they share one, and mixedCell when a bucket bound may
// fall inside it: there are 35 bounds an octave (ln 2 / ln γ), so under 1%
// of cells are mixed and computed exactly. Rows are built on first use (a
// trace's values span a few dozen exponents: 16 KiB each) and shared by
// every Dist; a row's content depends on nothing but its exponent, so two
// goroutines that build the same row build the same one.
const (
	cellBits  = 12
	cells     = 1 << cellBits
	mixedCell = math.MinInt32
	// cellMargin is how far from a bucket bound, in buckets, both ends of
	// a cell must be for the cell to take one bucket: far more than
	// math.Log's error (under one ulp) and the division's.
	cellMargin = 1e-6
)

var bucketRows [1 << 11]atomic.Pointer[[cells]int32]

func bucketSlow(v float64, bits uint64) int {
	exp := bits >> 52 & 0x7ff
	// Subnormal numbers, infinities and NaN (which never reach a
	// histogram) have no row.
	if exp == 0 || exp == 0x7ff {
		return bucketExact(v)
	}
	row := new([cells]int32)
	for c := uint64(0); c < cells; c++ {
		lo := exp<<52 | c<<(52-cellBits)
		row[c] = cellBucket(math.Float64frombits(lo), math.Float64frombits(lo+1<<(52-cellBits)))
	}
	bucketRows[exp].CompareAndSwap(nil, row)
	return bucketOf(v)
}

// cellBucket is the bucket of every value in [lo, hi), or mixedCell when
// the table cannot be sure: ln is increasing, so every value's true
// logarithm lies between the ends', and math.Log's result within an ulp
// of it.
func cellBucket(lo, hi float64) int32 {
	xl, xh := math.Log(lo)/logGamma, math.Log(hi)/logGamma
	b := math.Floor(xl)
	if math.IsInf(xh, 0) || math.Floor(xh) != b || xl-b < cellMargin || b+1-xh < cellMargin {
		return mixedCell
	}
	return int32(b)
}

// bucketValue is the geometric middle of bucket i: [γ^i, γ^(i+1)).
func bucketValue(i int) float64 { return math.Exp((float64(i) + 0.5) * logGamma) }

func (b *buckets) add(i int, k uint64) {
	if j := i - b.off; uint(j) < uint(len(b.counts)) {
		b.counts[j] += k // the common case: a bucket already there
		return
	}
	if len(b.counts) == 0 {
		b.off = i
		b.counts = append(b.counts, 0)
	}
	if i < b.off {
		grow := b.off - i
		b.counts = append(make([]uint64, grow, grow+len(b.counts)), b.counts...)
		b.off = i
	}
	for i-b.off >= len(b.counts) {
		b.counts = append(b.counts, 0)
	}
	b.counts[i-b.off] += k
}

func (h *hist) add(v float64, k uint64) {
	switch {
	case v > 0:
		h.pos.add(bucketOf(v), k)
	case v < 0:
		h.neg.add(bucketOf(-v), k)
	default:
		h.zero += k
	}
}

func (h *hist) merge(o *hist) {
	for i, c := range o.pos.counts {
		if c > 0 {
			h.pos.add(o.pos.off+i, c)
		}
	}
	for i, c := range o.neg.counts {
		if c > 0 {
			h.neg.add(o.neg.off+i, c)
		}
	}
	h.zero += o.zero
}

// atRank returns the value of the sample at 0-based rank r in ascending
// order: negatives from the largest magnitude down, zeros, positives up.
func (h *hist) atRank(r uint64) float64 {
	for i := len(h.neg.counts) - 1; i >= 0; i-- {
		c := h.neg.counts[i]
		if r < c {
			return -bucketValue(h.neg.off + i)
		}
		r -= c
	}
	if r < h.zero {
		return 0
	}
	r -= h.zero
	for i, c := range h.pos.counts {
		if r < c {
			return bucketValue(h.pos.off + i)
		}
		r -= c
	}
	if n := len(h.pos.counts); n > 0 {
		return bucketValue(h.pos.off + n - 1)
	}
	return 0
}
