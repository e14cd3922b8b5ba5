package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestShareCI: the Clopper-Pearson ends worked by hand. With k = n = 51 at
// 99%, the lower end solves p⁵¹ = 0.005: p = exp(ln 0.005 / 51) =
// exp(−5.29832/51) = 0.901330. With k = 0 of 10 the upper end is
// 1 − 0.005^(1/10) = 1 − 0.588700 = 0.411300.
func TestShareCI(t *testing.T) {
	lo, hi := ShareCI(51, 51, 0.99)
	if math.Abs(lo-0.901330) > 1e-5 || hi != 1 {
		t.Errorf("ShareCI(51, 51) = %g, %g", lo, hi)
	}
	lo, hi = ShareCI(0, 10, 0.99)
	if lo != 0 || math.Abs(hi-0.411300) > 1e-5 {
		t.Errorf("ShareCI(0, 10) = %g, %g", lo, hi)
	}
	// ln 0.005 / ln 0.95 = −5.29832 / −0.0512933 = 103.29 → 104.
	if n := MinShareSamples(0.95, 0.99); n != 104 {
		t.Errorf("MinShareSamples(0.95) = %d, want 104", n)
	}
}

func TestParseGoodput(t *testing.T) {
	slo := mustSLO(t, "goodput>=95%, ttft_p90<=1s")
	if !slo[0].Share || slo[0].Bound != 0.95 || slo[1].Share {
		t.Errorf("parsed %+v", slo)
	}
	if s := slo.Scaled(0.1); s[0].Bound != 0.95 || s[1].Bound != 100 {
		t.Errorf("a share must not scale with time: %+v", s)
	}
	for _, b := range []struct{ in, want string }{
		{"goodput>=95ms", "percent"},
		{"goodput<=95%", "lower limit"},
		{"goodput>=100%", "below 100%"},
		{"goodput>=0%", "above 0%"},
		{"itl_p90<=10ms", "not itl"},
	} {
		if _, err := ParseSLO(b.in); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseSLO(%q) = %v, want %q", b.in, err, b.want)
		}
	}
}

// TestGoodputSearch: each request is good with probability 1 − x/100, so
// the true share at x is 1 − x/100 and goodput>=95% holds up to x = 5.
func TestGoodputSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	p := proberFunc(func(x float64, n int) []Sample {
		out := make([]Sample, n)
		for i := range out {
			out[i] = Sample{OK: true, Good: rng.Float64() >= x/100, Values: map[string]float64{}}
		}
		return out
	})
	r, err := Search(context.Background(), Config{SLO: mustSLO(t, "goodput>=95%"), Lo: 1, Hi: 64, Integer: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lo > 5 || r.Hi < 5 {
		t.Errorf("goodput capacity [%g, %g] misses 5 (answer %g, %s)", r.Lo, r.Hi, r.Answer, r.Outcome)
	}
}

// TestKnee: throughputs 100, 180, 300, 310 at 1, 2, 4, 8: 90% of 310 is
// 279, first reached at 4, so the knee is 4, between 2 and 4. Rising
// 100, 200, 400: the first to reach 360 is the highest level: no knee.
func TestKnee(t *testing.T) {
	mk := func(tps ...float64) []Probe {
		var ps []Probe
		for i, v := range tps {
			ps = append(ps, Probe{X: math.Pow(2, float64(i)), TPS: v, Verdict: Pass})
		}
		return ps
	}
	k := KneeOf(mk(100, 180, 300, 310))
	if !k.Found || k.X != 4 || k.Lo != 2 || k.MaxTPS != 310 {
		t.Errorf("knee %+v", k)
	}
	if k := KneeOf(mk(100, 200, 400)); k.Found || !strings.Contains(k.Reason, "still rising") {
		t.Errorf("rising curve gave %+v", k)
	}
}

// TestEvaluateAgreesWithSearch: the answer re-decided from the probes
// alone (what reading the trace back does) is the search's own.
func TestEvaluateAgreesWithSearch(t *testing.T) {
	slo := mustSLO(t, "ttft_p90<=1s")
	for seed := range 50 {
		m := &model{rng: rand.New(rand.NewPCG(uint64(seed), 9)), base: func(x float64) float64 { return 100 * x }, sigma: 0.3}
		cfg, _ := Config{SLO: slo, Lo: 1, Hi: 64, Integer: true}.Resolve()
		r, err := Search(context.Background(), cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		e := Evaluate(cfg, r.Probes, BudgetReason)
		if e.Outcome != r.Outcome || e.Answer != r.Answer || e.Lo != r.Lo || e.Hi != r.Hi {
			t.Fatalf("seed %d: search %s %g [%g, %g], evaluate %s %g [%g, %g]", seed, r.Outcome, r.Answer, r.Lo, r.Hi, e.Outcome, e.Answer, e.Lo, e.Hi)
		}
	}
}
