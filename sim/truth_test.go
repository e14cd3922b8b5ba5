package sim

import (
	"testing"
	"time"
)

// TestModelClosedTTFTOneUser: one user alone finds the engine idle each
// time, so its TTFT is Hop + Overhead + BatchWindow + one step with no
// decoding stream (max(StepBase + 0·StepPerSeq, 0·StepCompute) =
// StepBase) that prefills all 800 prompt tokens (under the 2048 budget):
// for llama.cpp Q4_K_M 0 + 0 + 18 ms + 1.74 ms + 800·0.18 ms = 163.74 ms,
// and 10 ms more with a 10 ms hop.
func TestModelClosedTTFTOneUser(t *testing.T) {
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	for _, tc := range []struct {
		hop  time.Duration
		want time.Duration
	}{{0, 163740 * time.Microsecond}, {10 * time.Millisecond, 173740 * time.Microsecond}} {
		got := ModelClosedRounds(p, ClosedRound{Users: 1, PromptTokens: 800, MaxTokens: 256, Measured: 5, Hop: tc.hop}, 2, 1)
		if len(got) != 10 {
			t.Fatalf("hop %v: %d TTFTs, want 2 rounds × 5 measured", tc.hop, len(got))
		}
		for _, d := range got {
			if d != tc.want {
				t.Fatalf("hop %v: TTFT %v, want %v", tc.hop, d, tc.want)
			}
		}
	}
}

// TestModelClosedBurstStart: C users starting together with no hop send C
// prompts at once; the 2048-token budget prefills two and a bit per step,
// so the users' first requests get their first tokens in steps of about
// 2·144 ms. The warm-up (each user's first request) is exactly what the
// rule skips: none of those TTFTs is returned.
func TestModelClosedBurstStart(t *testing.T) {
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	r := ClosedRound{Users: 4, PromptTokens: 800, MaxTokens: 256, Measured: 8}
	got := ModelClosedRounds(p, r, 1, 1)
	if len(got) != 8 {
		t.Fatalf("%d measured TTFTs, want 8", len(got))
	}
	// The first measured request (user 1's second) is sent when user 1's
	// first ends; nothing it sees can be shorter than one user alone.
	for _, d := range got {
		if d < 163740*time.Microsecond {
			t.Errorf("TTFT %v shorter than an idle engine's 163.74 ms", d)
		}
	}
}

// TestModelClosedCapacity: the true closed-loop capacity of each seed
// profile (800-token prompts, 256 tokens out, the probe's rounds of 51
// measured requests) under each SLO, over the range of hops a client on
// a loaded machine adds. The bounds chosen are those where the answer is
// the same for every hop in the range: docs/CAPACITY.md tabulates the
// rest. A time-scaled profile must give the same capacity against the
// bound and hop scaled alike, and the concurrency axis's round rule
// (ModelClosedRoundCapacity) the same as the pooled rounds.
func TestModelClosedCapacity(t *testing.T) {
	t.Parallel() // the engine model alone, on no clock: beside the other model tests it uses both cores
	ms := time.Millisecond
	for _, tc := range []struct {
		profile string
		bound   time.Duration
		hops    [][2]time.Duration // {hop, jitter}
		want    int
		max     int
	}{
		// llama.cpp at 1 s: 6 users for any hop from 5 ms up; below 5 ms
		// users stay in lockstep and the answer jumps to 15 (CAPACITY.md).
		{"llamacpp-rtx5090-q4km", time.Second, [][2]time.Duration{{5 * ms, 5 * ms}, {10 * ms, 5 * ms}, {20 * ms, 10 * ms}, {50 * ms, 30 * ms}}, 6, 16},
		// llama.cpp at 500 ms: the clump of a simultaneous start decides
		// it for every hop.
		{"llamacpp-rtx5090-q4km", 500 * ms, [][2]time.Duration{{ms / 10, ms / 10}, {ms, ms}, {10 * ms, 5 * ms}, {20 * ms, 10 * ms}}, 3, 16},
		// vLLM at 1 s: every level to 64 meets it.
		{"vllm-rtx5090-bf16", time.Second, [][2]time.Duration{{0, 0}, {10 * ms, 5 * ms}, {50 * ms, 30 * ms}}, 64, 64},
	} {
		p, err := LookupProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tc.hops {
			r := ClosedRound{PromptTokens: 800, MaxTokens: 256, Measured: 51, Hop: h[0], Jitter: h[1]}
			got, at := ModelClosedCapacity(p, 0.9, tc.bound, r, tc.max, 20, 1)
			rs := r
			rs.Hop, rs.Jitter = h[0]/10, h[1]/10
			scaled, _ := ModelClosedCapacity(p.Scaled(0.1), 0.9, tc.bound/10, rs, tc.max, 20, 1)
			if got != tc.want || scaled != got {
				t.Errorf("%s ttft_p90<=%v hop %v+%v: capacity %d (time scale 0.1: %d), want %d; p90 by level %v",
					tc.profile, tc.bound, h[0], h[1], got, scaled, tc.want, at)
			}
			// The round rule (the median over rounds of each round's
			// p90, rounds of C·max(2, ⌈20/C⌉)) gives the same capacity.
			rounds, rat := ModelClosedRoundCapacity(p, 0.9, tc.bound, ClosedRoundRule{Batch: 20}, r, tc.max, 10, 1)
			if rounds != tc.want {
				t.Errorf("%s ttft_p90<=%v hop %v+%v: by the round rule %d, want %d; median round p90 by level %v",
					tc.profile, tc.bound, h[0], h[1], rounds, tc.want, rat)
			}
		}
	}
}

// TestModelOpenOneRequest: a request alone finds the engine idle: TTFT =
// Hop + Overhead + BatchWindow + one prefill step, as for one closed-loop
// user (163.74 ms for llama.cpp Q4_K_M with no hop); at a rate of 0.01/s
// every request of a round is alone.
func TestModelOpenOneRequest(t *testing.T) {
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	got := ModelOpenRounds(p, OpenRound{Rate: 0.01, PromptTokens: 800, MaxTokens: 256, Warmup: 2, Measured: 6, Hop: 10 * time.Millisecond}, 2, 1)
	if len(got) != 12 {
		t.Fatalf("%d TTFTs, want 2 rounds × 6 measured", len(got))
	}
	for _, d := range got {
		if d != 173740*time.Microsecond {
			t.Fatalf("TTFT %v, want 173.74ms", d)
		}
	}
}

// TestModelOpenCapacity: the rate axis's truth for llama.cpp Q4_K_M at
// ttft_p90<=1s (rounds of 6 warm-up + 51 measured Poisson arrivals, 200
// rounds pooled) is about 4 req/s for every hop from 1 to 50 ms: TTFT
// stays under 0.6 s to 3.5 req/s and explodes past 4 as prefill steps
// (144 ms per prompt) fill the engine. A time-scaled profile gives ten
// times the rate against the bound and hop scaled alike.
func TestModelOpenCapacity(t *testing.T) {
	t.Parallel() // the engine model alone, on no clock: beside the other model tests it uses both cores
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	ms := time.Millisecond
	for _, h := range [][2]time.Duration{{ms, ms}, {10 * ms, 5 * ms}, {50 * ms, 30 * ms}} {
		r := OpenRound{PromptTokens: 800, MaxTokens: 256, Warmup: 6, Measured: 51, Hop: h[0], Jitter: h[1]}
		got := ModelOpenCapacity(p, 0.9, time.Second, r, 0.5, 20, 0.01, 200, 1)
		rs := r
		rs.Hop, rs.Jitter = h[0]/10, h[1]/10
		scaled := ModelOpenCapacity(p.Scaled(0.1), 0.9, 100*ms, rs, 5, 200, 0.1, 200, 1)
		t.Logf("hop %v+%v: %.3f req/s (time scale 0.1: %.2f)", h[0], h[1], got, scaled)
		if got < 3.9 || got > 4.1 || scaled < 10*got-0.2 || scaled > 10*got+0.2 {
			t.Errorf("hop %v+%v: %.3f req/s (time scale 0.1: %.2f), want 3.9-4.1 and ten times that", h[0], h[1], got, scaled)
		}
	}
}

// TestModelOpenRoundCapacity: the rate axis's true rate for llama.cpp
// under ttft_p90<=1s by the round rule (rounds of ⌈rate·D⌉ measured
// requests, at least 20, from an idle engine; the median over rounds of
// each round's p90), at the profile's own pace with a 10 ms client hop
// and at time scale 0.1 with the 1 ms hop measured there (the same hop
// in the profile's time), for 20 s rounds (the default) and 5 s rounds.
// Longer rounds answer nearer the rate the engine sustains: with 5 s
// rounds a burst of 30 requests fits its batch, with 20 s the queue
// shows. The figures are in docs/CAPACITY.md.
func TestModelOpenRoundCapacity(t *testing.T) {
	t.Parallel() // the engine model alone, on no clock: beside the other model tests it uses both cores
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	ms := time.Millisecond
	for _, tc := range []struct {
		scale    float64
		seconds  float64
		hop, jit time.Duration
		lo, hi   float64 // the true rate at the profile's pace lies in [lo, hi]
	}{
		{1, 20, 10 * ms, 5 * ms, 3.7, 3.95},
		{0.1, 20, ms, ms / 2, 3.7, 3.95},
		{0.1, 20, 2 * ms, ms, 3.7, 3.95},
		{0.1, 5, ms, ms / 2, 5.9, 6.1},
	} {
		u := OpenRoundRule{Batch: 20, Seconds: tc.seconds * tc.scale}
		r := OpenRound{PromptTokens: 800, MaxTokens: 256, Hop: tc.hop, Jitter: tc.jit}
		bound := time.Duration(float64(time.Second) * tc.scale)
		got := ModelOpenRoundCapacity(p.Scaled(tc.scale), 0.9, bound, u, r, 0.1/tc.scale, 20/tc.scale, 0.01/tc.scale, 200, 1) * tc.scale
		t.Logf("scale %g, %g s rounds, hop %v: %.3f req/s at the profile's pace", tc.scale, tc.seconds, tc.hop, got)
		if got < tc.lo || got > tc.hi {
			t.Errorf("scale %g, %g s rounds, hop %v: true rate %.3f req/s, want %g..%g", tc.scale, tc.seconds, tc.hop, got, tc.lo, tc.hi)
		}
	}
}

// TestClosedRoundRule: at c users each user sends max(2, ⌈20/c⌉)
// measured requests after its first: 1 user 20, 3 users 21 (7 each), 6
// users 24 (4 each), 10 users 20, 11 users 22 (2 each), 64 users 128.
// One user alone finds the engine idle every time, so every round's p90
// is the idle TTFT worked out in TestModelClosedTTFTOneUser (163.74 ms
// for llama.cpp Q4_K_M with no hop), and the round rule's capacity at
// that bound is 1 user, at a nanosecond less 0.
func TestClosedRoundRule(t *testing.T) {
	u := ClosedRoundRule{Batch: 20}
	for c, want := range map[int]int{1: 20, 3: 21, 6: 24, 10: 20, 11: 22, 64: 128} {
		if r := u.Round(c, ClosedRound{}); r.Users != c || r.Measured != want {
			t.Errorf("%d users: round %+v, want %d measured", c, r, want)
		}
	}
	p, _ := LookupProfile("llamacpp-rtx5090-q4km")
	r := ClosedRound{PromptTokens: 800, MaxTokens: 256}
	const idle = 163740 * time.Microsecond
	for _, d := range ModelClosedRoundQuantiles(p, u.Round(1, r), 0.9, 3, 1) {
		if d != idle {
			t.Fatalf("one user's round p90 %v, want %v", d, idle)
		}
	}
	if c, _ := ModelClosedRoundCapacity(p, 0.9, idle, u, r, 1, 3, 1); c != 1 {
		t.Errorf("capacity at %v: %d, want 1", idle, c)
	}
	if c, _ := ModelClosedRoundCapacity(p, 0.9, idle-1, u, r, 1, 3, 1); c != 0 {
		t.Errorf("capacity at %v: %d, want 0", idle-1, c)
	}
}
