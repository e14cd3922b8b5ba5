package workload

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestConstantOffsetsExact(t *testing.T) {
	for _, spec := range []string{"rate:1", "rate:3", "rate:7.5", "rate:0.3", "rate:1000", "rate:2.000001"} {
		sp, err := parseSchedule(spec)
		if err != nil {
			t.Fatal(err)
		}
		offs := arrival{kind: "constant"}.offsets(2000, sp, 1, streamArrival)
		for i, got := range offs {
			// reference: round(i·10⁹/R) in exact rationals
			want := new(big.Rat).Mul(big.NewRat(int64(i)*1e9, 1), new(big.Rat).Inv(sp.rate))
			f, _ := want.Float64()
			if w := int64(math.Floor(f + 0.5)); got != w && math.Abs(f-math.Floor(f)-0.5) > 1e-6 {
				t.Fatalf("%s: offset %d = %d ns, want %d", spec, i, got, w)
			}
			// exact check without floats: |got·R − i·10⁹| ≤ R/2
			diff := new(big.Rat).Sub(new(big.Rat).Mul(big.NewRat(got, 1), sp.rate), big.NewRat(int64(i)*1e9, 1))
			diff.Abs(diff)
			if diff.Cmp(new(big.Rat).Quo(sp.rate, big.NewRat(2, 1))) > 0 {
				t.Fatalf("%s: offset %d = %d ns is not the nearest ns to i/R", spec, i, got)
			}
		}
	}
}

func TestRandomArrivalStatistics(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		arrival string
		cv      float64 // coefficient of variation of the gaps
	}{
		{"poisson", 1},
		{"gamma:1", 1},
		{"gamma:4", 0.5},
		{"gamma:0.25", 2},
	} {
		a, err := parseArrival(tc.arrival)
		if err != nil {
			t.Fatal(err)
		}
		sp, _ := parseSchedule("rate:50")
		offs := a.offsets(n+1, sp, 12345, streamArrival)
		var sum, sum2 float64
		for i := 1; i < len(offs); i++ {
			g := float64(offs[i]-offs[i-1]) / 1e9
			if g < 0 {
				t.Fatalf("%s: offsets go backwards at %d", tc.arrival, i)
			}
			sum += g
			sum2 += g * g
		}
		mean := sum / n
		cv := math.Sqrt(sum2/n-mean*mean) / mean
		// mean gap 20 ms; with 20,000 gaps the standard error is ≤ 2 %·CV
		if math.Abs(mean-0.02)/0.02 > 0.05 {
			t.Errorf("%s: mean gap %.5f s, want 0.02 ± 5%%", tc.arrival, mean)
		}
		if math.Abs(cv-tc.cv)/tc.cv > 0.1 {
			t.Errorf("%s: gap CV %.3f, want %.2f ± 10%%", tc.arrival, cv, tc.cv)
		}
		again := a.offsets(n+1, sp, 12345, streamArrival)
		for i := range offs {
			if offs[i] != again[i] {
				t.Fatalf("%s: offsets differ between two draws with one seed", tc.arrival)
			}
		}
	}
}

// detLog and detExp trade speed for bit-identical results; check they are
// also accurate, against the standard library.
func TestDetMathAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 100000; i++ {
		x := math.Ldexp(rng.Float64()+0.5, rng.IntN(200)-100)
		if got, want := detLog(x), math.Log(x); math.Abs(got-want) > 4e-16*math.Max(1, math.Abs(want)) {
			t.Fatalf("detLog(%g) = %.17g, want %.17g", x, got, want)
		}
		y := rng.Float64()*100 - 50
		if got, want := detExp(y), math.Exp(y); math.Abs(got-want) > 4e-16*want {
			t.Fatalf("detExp(%g) = %.17g, want %.17g", y, got, want)
		}
	}
	for n := 1; n < 1000; n++ {
		rng := rand.New(rand.NewPCG(uint64(n), 0))
		if k := intN(rng, n); k < 0 || k >= n {
			t.Fatalf("intN(%d) = %d", n, k)
		}
	}
}

func TestRatePhases(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, InputTokens: []int{100}, Schedule: "rate:4", Arrival: "constant", Requests: 9, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(wl.Header.Phases) != 2 || wl.Header.Phases[0].Name != "rate-4-in100-r1" || wl.Header.Phases[0].Rate != 4 {
		t.Fatalf("phases %+v", wl.Header.Phases)
	}
	for _, r := range wl.Requests {
		i := r.Index % 9
		if want := int64(i) * 250_000_000; r.Offset != want {
			t.Fatalf("%s offset %d, want %d", r.ID, r.Offset, want)
		}
	}
}
