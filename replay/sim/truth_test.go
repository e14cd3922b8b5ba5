package sim

import (
	"testing"
	"time"
)

// TestModelClosedCapacity: the true closed-loop capacity of each seed
// profile under ttft_p90 ≤ 1 s (800-token prompts, 256 tokens out), from
// the engine model alone. Kept here so a change to a profile that moves
// it is seen. A time-scaled profile must give the same capacity against
// the bound scaled alike.
func TestModelClosedCapacity(t *testing.T) {
	for _, tc := range []struct {
		profile string
	}{{"llamacpp-rtx5090-q4km"}, {"vllm-rtx5090-bf16"}} {
		p, err := LookupProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		got := ModelClosedCapacity(p, 0.9, time.Second, 800, 256, 64, 400)
		scaled := ModelClosedCapacity(p.Scaled(0.1), 0.9, 100*time.Millisecond, 800, 256, 64, 400)
		t.Logf("%s: true capacity at ttft_p90<=1s: %d users (time scale 0.1: %d)", tc.profile, got, scaled)
		if got < 1 || got != scaled {
			t.Errorf("%s: capacity %d, scaled %d", tc.profile, got, scaled)
		}
	}
}

// TestModelClosedTTFTOneUser: one user alone finds the engine idle each
// time, so its TTFT is Overhead + BatchWindow + one step with no decoding
// stream (max(StepBase + 0·StepPerSeq, 0·StepCompute) = StepBase) that
// prefills all 800 prompt tokens (under the 2048 budget): for llama.cpp
// Q4_K_M 0 + 18 ms + 1.74 ms + 800·0.18 ms = 163.74 ms.
func TestModelClosedTTFTOneUser(t *testing.T) {
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	for _, d := range ModelClosedTTFT(p, 1, 800, 256, 5) {
		if d != 163740*time.Microsecond {
			t.Fatalf("TTFT %v, want 163.74ms", d)
		}
	}
}
