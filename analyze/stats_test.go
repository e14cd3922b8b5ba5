package analyze

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestOrderCI(t *testing.T) {
	// n = 10, median: P(B ≤ 1) = 11/1024 = 0.0107 ≤ 0.025 < P(B ≤ 2) =
	// 56/1024 = 0.0547, so l = 2 and by symmetry h = 9.
	if l, h := orderCI(10, 0.5, 0.95); l != 2 || h != 9 {
		t.Errorf("orderCI(10) = %d, %d; want 2, 9", l, h)
	}
	// n = 5: P(B ≤ 0) = 1/32 = 0.031 > 0.025, so no lower order statistic
	// bounds the median at 95%: l = 0 (unbounded), h = 6 (unbounded).
	if l, h := orderCI(5, 0.5, 0.95); l != 0 || h != 6 {
		t.Errorf("orderCI(5) = %d, %d; want 0, 6", l, h)
	}
	// n = 6: P(B ≤ 0) = 1/64 = 0.0156 ≤ 0.025 < P(B ≤ 1) = 7/64: l = 1, h = 6.
	if l, h := orderCI(6, 0.5, 0.95); l != 1 || h != 6 {
		t.Errorf("orderCI(6) = %d, %d; want 1, 6", l, h)
	}
}

func TestMannWhitney(t *testing.T) {
	// {1,2,3} vs {4,5,6}: U = 0, the most extreme of C(6,3) = 20
	// arrangements on either side: p = 2/20 = 0.1.
	if p := MannWhitneyP([]float64{1, 2, 3}, []float64{4, 5, 6}); !near(p, 0.1) {
		t.Errorf("p = %v, want 0.1", p)
	}
	// 5 vs 5 fully separated: p = 2/C(10,5) = 2/252.
	if p := MannWhitneyP([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); !near(p, 2.0/252) {
		t.Errorf("p = %v, want %v", p, 2.0/252)
	}
	// Identical samples: no difference.
	if p := MannWhitneyP([]float64{1, 1, 1}, []float64{1, 1, 1}); p != 1 {
		t.Errorf("p = %v, want 1", p)
	}
	// Large samples (normal approximation) of clearly different means.
	var a, b []float64
	for i := 0; i < 100; i++ {
		a = append(a, float64(i))
		b = append(b, float64(i)+50)
	}
	if p := MannWhitneyP(a, b); p > 1e-6 {
		t.Errorf("p = %v, want tiny", p)
	}
}

func TestDistExactQuantiles(t *testing.T) {
	var d Dist
	for _, v := range []float64{5, 1, 4, 2, 3} {
		d.Add(v)
	}
	// numpy linear: p50 = 3, p90 at position 3.6 → 4 + 0.6 = 4.6.
	if d.Quantile(0.5) != 3 || !near(d.Quantile(0.9), 4.6) || d.Min() != 1 || d.Max() != 5 || d.Mean() != 3 {
		t.Errorf("quantiles wrong: %v %v", d.Quantile(0.5), d.Quantile(0.9))
	}
	d.AddN(10, 3) // weight 3 = three samples of 10
	if d.N() != 8 || d.Quantile(1) != 10 {
		t.Errorf("weights: n=%d", d.N())
	}
}

func TestDistHistogramError(t *testing.T) {
	// Beyond exactCap the histogram takes over; every quantile must stay
	// within 1% of the exact one.
	rng := rand.New(rand.NewPCG(1, 2))
	var d, a, b Dist
	var all []float64
	for i := 0; i < 3*exactCap; i++ {
		v := math.Exp(rng.NormFloat64()) * 20 // log-normal, like latencies
		all = append(all, v)
		d.Add(v)
		if i%2 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	if d.Exact() {
		t.Fatal("expected histogram mode")
	}
	a.Merge(&b)
	sort.Float64s(all)
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.99, 0.999} {
		exact := all[int(math.Round(q*float64(len(all)-1)))]
		for name, x := range map[string]*Dist{"direct": &d, "merged": &a} {
			got := x.Quantile(q)
			if math.Abs(got-exact)/exact > 0.01 {
				t.Errorf("%s q%.3f = %v, exact %v: error above 1%%", name, q, got, exact)
			}
		}
	}
	// Zero and negative values survive the histogram.
	var z Dist
	for i := 0; i < exactCap+10; i++ {
		z.Add(float64(i%3 - 1)) // -1, 0, 1
	}
	if z.Exact() || !near(z.Quantile(0.5), 0) || z.Min() != -1 || z.Max() != 1 {
		t.Errorf("signed histogram: median %v", z.Quantile(0.5))
	}
	if q := z.Quantile(0.01); math.Abs(q+1) > 0.01 {
		t.Errorf("negative bucket: %v", q)
	}
}

func TestCountUpValid(t *testing.T) {
	ref := "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12"
	cases := []struct {
		text string
		want int
	}{
		{"1, 2, 3", 7},
		{" 1, 2, 3", 8},             // leading space allowed
		{"1\n2\n3\n", 6},            // other separator, trailing separator kept
		{"1 2 3 4 5 6 7 8 9 1", 19}, // "1" is a cut-off prefix of 10
		{"1, 2, 4", 6},              // reference prefix "1, 2, " wins over the pattern's 4
		{"<think>ok</think>", 0},
		{"", 0},
		{"0, 1, 2", 0},
	}
	for _, c := range cases {
		if got := countUpValid(c.text, ref); got != c.want {
			t.Errorf("countUpValid(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	if got := countUpValid("1; 2; 3", ""); got != 7 {
		t.Errorf("pattern without reference = %d, want 7", got)
	}
}

func TestUsageCounts(t *testing.T) {
	cases := []struct {
		usage, timings string
		c, p           int
	}{
		{`{"completion_tokens":5,"prompt_tokens":9}`, "", 5, 9},
		{"", `{"predicted_n":7,"prompt_n":3}`, 7, 3},
		{`{"eval_count":4,"prompt_eval_count":2}`, "", 4, 2},
		// Anthropic: prompt = input 10 + cache read 90 + cache creation 5 = 105.
		{`{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":90,"output_tokens":12}`, "", 12, 105},
		{`{"input_tokens":7,"output_tokens":1}`, "", 1, 7},
		{`{"generated_tokens":20,"input_length":6}`, "", 20, 6}, // TGI
		{"", "", -1, -1},
		{"null", "{bad", -1, -1},
	}
	for _, c := range cases {
		if got, p := usageCounts(c.usage, c.timings); got != c.c || p != c.p {
			t.Errorf("usageCounts(%q, %q) = %d, %d", c.usage, c.timings, got, p)
		}
	}
}
