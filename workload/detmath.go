package workload

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// The arrival processes must give the same offsets on every machine, so
// this file avoids everything whose last bit may differ between
// architectures: math.Log and math.Exp (assembly on some, pure Go with
// fused multiply-adds on others) and math/rand/v2's helper methods (whose
// algorithms are not promised to stay the same across Go releases). PCG's
// raw Uint64 is a specified algorithm, IEEE +, −, ×, ÷ and sqrt are
// correctly rounded everywhere, and every product below is wrapped in an
// explicit float64 conversion, which the Go spec says prevents fusion.

// intN returns a uniform integer in [0, n) (Lemire's multiply-shift with
// rejection, so no modulo bias).
func intN(rng *rand.Rand, n int) int {
	if n <= 1 {
		return 0
	}
	bound := uint64(n)
	threshold := -bound % bound
	for {
		hi, lo := bits.Mul64(rng.Uint64(), bound)
		if lo >= threshold {
			return int(hi)
		}
	}
}

// shuffle permutes s in place (Fisher–Yates with intN).
func shuffle(rng *rand.Rand, s []int) {
	for i := len(s) - 1; i > 0; i-- {
		j := intN(rng, i+1)
		s[i], s[j] = s[j], s[i]
	}
}

// unit returns a uniform float in (0, 1]: never 0, so its log is finite.
func unit(rng *rand.Rand) float64 {
	return float64(rng.Uint64()>>11+1) * (1.0 / (1 << 53))
}

// detLog is the natural logarithm for x > 0, accurate to a few ulps and
// bit-identical on every platform.
func detLog(x float64) float64 {
	m, e := math.Frexp(x) // exact: x = m·2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2 // exact
		e--
	}
	// ln m = 2·atanh(s) with s = (m−1)/(m+1), |s| ≤ 0.172: the series
	// s + s³/3 + s⁵/5 … converges fast enough for 22 terms to reach full
	// precision.
	s := (m - 1) / (m + 1)
	z := float64(s * s)
	sum := 0.0
	for k := 21; k >= 0; k-- {
		sum = float64(sum*z) + 1/float64(2*k+1)
	}
	return float64(float64(e)*math.Ln2) + float64(float64(2*s)*sum)
}

// detExp is e^x, bit-identical on every platform.
func detExp(x float64) float64 {
	if x < -745 {
		return 0
	}
	if x > 709 {
		return math.Inf(1)
	}
	// Cody–Waite reduction: ln2Hi has trailing zero bits, so n·ln2Hi is
	// exact and r keeps full precision.
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
	)
	n := math.Round(x / math.Ln2)
	r := (x - float64(n*ln2Hi)) - float64(n*ln2Lo)
	// Taylor series of e^r for |r| ≤ 0.35, Horner form.
	sum := 1.0
	for k := 24; k >= 1; k-- {
		sum = 1 + float64(float64(sum*r)/float64(k))
	}
	return math.Ldexp(sum, int(n))
}

// expo draws from the exponential distribution with mean 1.
func expo(rng *rand.Rand) float64 { return -detLog(unit(rng)) }

// normal draws from the standard normal distribution (Marsaglia's polar
// method: needs only log and sqrt).
func normal(rng *rand.Rand) float64 {
	for {
		u := float64(2*unit(rng)) - 1
		v := float64(2*unit(rng)) - 1
		s := float64(u*u) + float64(v*v)
		if s >= 1 || s == 0 {
			continue
		}
		return float64(u * math.Sqrt(float64(-2*detLog(s))/s))
	}
}

// gammaDraw draws from the gamma distribution with the given shape and
// scale 1/shape, so its mean is 1 and its coefficient of variation is
// 1/√shape (Marsaglia and Tsang, 2000).
func gammaDraw(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		// Gamma(k) = Gamma(k+1) · U^(1/k)
		g := gammaDraw(rng, shape+1) * float64(shape+1) // undo the mean-1 scaling
		u := detExp(detLog(unit(rng)) / shape)
		return float64(float64(g*u) / shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(float64(9*d))
	for {
		x := normal(rng)
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = float64(float64(v*v) * v)
		u := unit(rng)
		x2 := float64(x * x)
		if u < 1-float64(0.0331*float64(x2*x2)) {
			return float64(d*v) / shape
		}
		if detLog(u) < float64(0.5*x2)+float64(d*(1-v+detLog(v))) {
			return float64(d*v) / shape
		}
	}
}
