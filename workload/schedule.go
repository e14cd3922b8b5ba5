package workload

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Limits on schedule values: anything past them is a typo, not a plan.
const (
	maxLevel   = 100_000
	maxRepeats = 1_000
	maxRate    = 1_000_000.0
)

// schedSpec is a parsed --schedule.
type schedSpec struct {
	kind   string
	levels []int
	rate   *big.Rat // exact, for constant offsets
	rateF  float64
	// rates are every rate of rate:R1,R2,… (rate is the one being
	// planned), with their spellings for phase names.
	rates     []*big.Rat
	rateSpecs []string
	file      string // trace
}

func parseSchedule(s string) (schedSpec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || arg == "" {
		return schedSpec{}, fieldErr("Schedule", fmt.Sprintf("%q is not a schedule", s), "use burst:1,4,8, closed:4,8, rate:R or trace:FILE")
	}
	sp := schedSpec{kind: kind}
	switch kind {
	case KindBurst, KindClosed:
		for _, f := range strings.Split(arg, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > maxLevel {
				return schedSpec{}, fieldErr("Schedule", fmt.Sprintf("%q: %q is not a concurrency level", s, f), fmt.Sprintf("use whole numbers from 1 to %d", maxLevel))
			}
			sp.levels = append(sp.levels, n)
		}
	case KindRate:
		// rate:1,2,5 is a rate sweep: one open-loop phase per rate.
		for _, f := range strings.Split(arg, ",") {
			f = strings.TrimSpace(f)
			r, ok := new(big.Rat).SetString(f)
			if !ok || r.Sign() <= 0 {
				return schedSpec{}, fieldErr("Schedule", fmt.Sprintf("%q: %q is not a positive rate", s, f), "give requests per second, e.g. rate:2.5 or rate:1,2,5")
			}
			rf, _ := r.Float64()
			if rf > maxRate || rf < 1e-6 {
				return schedSpec{}, fieldErr("Schedule", fmt.Sprintf("%q: the rate %s is out of range", s, f), fmt.Sprintf("use 0.000001 to %g requests per second", maxRate))
			}
			sp.rates = append(sp.rates, r)
			sp.rateSpecs = append(sp.rateSpecs, f)
		}
		sp.rate = sp.rates[0]
		sp.rateF, _ = sp.rate.Float64()
	case KindTrace:
		sp.file = arg
	default:
		return schedSpec{}, fieldErr("Schedule", fmt.Sprintf("%q has an unknown kind %q", s, kind), "use burst, closed, rate or trace")
	}
	return sp, nil
}

// arrival is a parsed --arrival.
type arrival struct {
	kind  string // "poisson", "constant" or "gamma"
	shape float64
}

func parseArrival(s string) (arrival, error) {
	switch {
	case s == "" || s == "poisson":
		return arrival{kind: "poisson"}, nil
	case s == "constant":
		return arrival{kind: "constant"}, nil
	case strings.HasPrefix(s, "gamma:"):
		k, err := strconv.ParseFloat(s[len("gamma:"):], 64)
		if err != nil || !(k >= 0.01 && k <= 1e6) {
			return arrival{}, fieldErr("Arrival", fmt.Sprintf("%q has no usable shape", s), "gamma:SHAPE takes 0.01 to 1000000 (1 is Poisson, below 1 is burstier)")
		}
		return arrival{kind: "gamma", shape: k}, nil
	}
	return arrival{}, fieldErr("Arrival", fmt.Sprintf("%q is not an arrival process", s), "use poisson, constant or gamma:SHAPE")
}

// atRate is the spec at its ri-th rate, and how many arrivals to draw: n,
// or with a duration enough to pass its end (mean rate·D plus ten standard
// deviations), of which beforeEnd keeps those before it.
func (sp schedSpec) atRate(ri, n int, d time.Duration) (schedSpec, int) {
	one := sp
	one.rate = sp.rates[ri]
	one.rateF, _ = one.rate.Float64()
	if d > 0 {
		mean := one.rateF * d.Seconds()
		n = int(math.Ceil(mean+10*math.Sqrt(mean))) + 10
	}
	return one, n
}

// beforeEnd keeps the offsets before d (all of them when d is 0).
func beforeEnd(offs []int64, d time.Duration) []int64 {
	if d <= 0 {
		return offs
	}
	n := 0
	for n < len(offs) && offs[n] < int64(d) {
		n++
	}
	return offs[:n]
}

// offsets returns n arrival offsets in nanoseconds from the phase start,
// the first at 0. Constant offsets are exact: round(i·10⁹/R) computed in
// rational arithmetic. Random ones add rounded gaps drawn from stream.
func (a arrival) offsets(n int, sp schedSpec, seed int64, stream uint64) []int64 {
	out := make([]int64, n)
	if a.kind == "constant" {
		num := new(big.Int)
		den := new(big.Int)
		q := new(big.Int)
		r := new(big.Int)
		for i := range out {
			// i·10⁹/R = i·10⁹·den(R)/num(R), rounded half up
			num.Mul(big.NewInt(int64(i)), big.NewInt(1e9))
			num.Mul(num, sp.rate.Denom())
			den.Set(sp.rate.Num())
			q.QuoRem(num, den, r)
			r.Lsh(r, 1)
			if r.Cmp(den) >= 0 {
				q.Add(q, big.NewInt(1))
			}
			out[i] = q.Int64()
		}
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	nsPerMean := 1e9 / sp.rateF
	var t int64
	for i := range out {
		out[i] = t
		var g float64
		if a.kind == "gamma" {
			g = gammaDraw(rng, a.shape)
		} else {
			g = expo(rng)
		}
		t += int64(math.Round(float64(g * nsPerMean)))
	}
	return out
}
