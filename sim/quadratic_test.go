package sim

import (
	"strings"
	"testing"
	"time"
)

// The quadratic-prefill fault adds exactly QuadraticPrefill·L(L−1)/2 to an
// L-token prompt's prefill, whatever the chunking: judged on the engine
// model's virtual clock (modelBurst), not on a wall clock. With 50 ns:
// L=100: 50ns·4,950 = 247.5 µs; L=1,000: 50ns·499,500 = 24.975 ms;
// L=8,000 (four 2,048-token chunks under vLLM's budget): 50ns·31,996,000
// = 1.5998 s.
func TestQuadraticPrefillModel(t *testing.T) {
	base, err := LookupProfile("vllm-rtx5090-bf16")
	if err != nil {
		t.Fatal(err)
	}
	quad := base
	quad.PrefillPerPair = 50 * time.Nanosecond
	for _, c := range []struct {
		in   int
		want time.Duration
	}{{100, 247500 * time.Nanosecond}, {1000, 24975 * time.Microsecond}, {8000, 1599800 * time.Microsecond}} {
		plain := modelBurst(base, 1, c.in, 2).TTFT
		slow := modelBurst(quad, 1, c.in, 2).TTFT
		if got := slow - plain; got != c.want {
			t.Errorf("input %d: the fault added %v to TTFT, want %v", c.in, got, c.want)
		}
	}
	// Chunk by chunk the pairs add up to the whole prompt's.
	var sum int64
	for from := 0; from < 8000; from += 2048 {
		sum += prefillPairs(from, min(2048, 8000-from))
	}
	if sum != 8000*7999/2 {
		t.Errorf("chunked pairs %d, want %d", sum, 8000*7999/2)
	}
}

func TestQuadraticPrefillConfig(t *testing.T) {
	fast, _ := LookupProfile("fast")
	if _, err := New(Config{Profile: fast, QuadraticPrefill: time.Microsecond}); err == nil || !strings.Contains(err.Error(), "no engine model") {
		t.Errorf("the fast profile with a quadratic prefill: %v", err)
	}
	if _, err := New(Config{QuadraticPrefill: -1}); err == nil {
		t.Error("a negative quadratic prefill was accepted")
	}
	s, err := New(Config{QuadraticPrefill: 50 * time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p := s.Profile(); p.PrefillPerPair != 50*time.Nanosecond || !strings.Contains(p.String(), "+50ns/tok·earlier tok") {
		t.Errorf("profile after the fault: %v\n%s", p.PrefillPerPair, p)
	}
	// A simulator run at a tenth of its pace (sim --time-scale 0.1) runs
	// the fault at a tenth too, like every other duration of its engine:
	// 80ns per pair becomes 8ns.
	def, _ := LookupProfile(DefaultProfile)
	scaled, err := New(Config{Profile: def.Scaled(0.1), QuadraticPrefill: 80 * time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer scaled.Close()
	if p := scaled.Profile(); p.PrefillPerPair != 8*time.Nanosecond {
		t.Errorf("fault at time scale 0.1: %v per pair, want 8ns", p.PrefillPerPair)
	}
}
