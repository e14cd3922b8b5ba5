package sim

import (
	"testing"
	"time"
)

// TestSessionCacheModel runs a conversation's two turns through the engine
// model on a virtual clock: the second turn resends the first's prompt and
// answer, so its cached tokens are the full blocks of prompt+answer, and
// its TTFT is the model's step for the uncached rest. The numbers are
// worked out from the profile by hand; no wall clock is involved.
func TestSessionCacheModel(t *testing.T) {
	p := mustProfile(t, "vllm-rtx5090-bf16") // block 16, chunked prefill
	const (
		prompt1 = 1000 // turn 1's prompt
		answer  = 50   // turn 1's answer (max_tokens)
		follow  = 46   // turn 2's new user message
	)
	ids1 := make([]int, prompt1+answer)
	for i := range ids1 {
		ids1[i] = 1000 + i
	}
	// Turn 2's prompt: turn 1's prompt, its answer, the follow-up.
	ids2 := append(append([]int(nil), ids1...), make([]int, follow)...)
	for i := prompt1 + answer; i < len(ids2); i++ {
		ids2[i] = 7 + i
	}
	c := newCore(p, true)
	turn := func(ids []int, promptN, maxTokens int) (cached int, ttft time.Duration) {
		s := &seq{promptTokens: promptN, maxTokens: maxTokens}
		s.doneHashes = blockHashes(ids, p.BlockSize)
		s.hashes = s.doneHashes[:promptN/p.BlockSize]
		c.enqueue(s)
		var now time.Duration
		for {
			d, em, ok := c.step()
			if !ok {
				break
			}
			now += d
			for _, e := range em {
				if e == s && e.produced == 1 {
					ttft = now
				}
			}
		}
		return s.cachedTokens, ttft
	}
	// Turn 1: cold. The answer's ids follow the prompt in the chain.
	cached1, ttft1 := turn(ids1, prompt1, answer)
	if cached1 != 0 {
		t.Fatalf("turn 1 cached %d tokens, want 0", cached1)
	}
	cached2, ttft2 := turn(ids2, prompt1+answer+follow, 4)
	// 1,050 tokens of prompt+answer hold 65 full blocks of 16: 1,040
	// tokens; the 56 after them (10 of the answer, the follow-up's 46)
	// are computed.
	if want := (prompt1 + answer) / p.BlockSize * p.BlockSize; cached2 != want || want != 1040 {
		t.Fatalf("turn 2 cached %d tokens, want %d", cached2, want)
	}
	// One step computes the 56 uncached tokens (within the budget) with
	// nothing decoding: TTFT = StepBase + 56·PrefillPerToken (no pairs
	// cost in this profile).
	if p.PrefillPerPair != 0 || p.PrefillBudget != 0 && p.PrefillBudget < 56 {
		t.Fatalf("profile changed: %+v", p)
	}
	if want := p.stepTime(0, 56, 0); ttft2 != want {
		t.Fatalf("turn 2 TTFT %v, want %v (one step of 56 uncached tokens)", ttft2, want)
	}
	// And the cold turn 1 computed all 1,000 tokens.
	if ttft1 <= ttft2 {
		t.Fatalf("cold TTFT %v is not above the warm turn's %v", ttft1, ttft2)
	}
	// Without the answer's blocks (the cache before this change kept only
	// prompts), turn 2 would find 62 blocks (992 tokens): the answer's
	// blocks are what make it 1,040.
	c2 := newCore(p, true)
	s := &seq{promptTokens: prompt1, maxTokens: answer}
	s.hashes = blockHashes(ids1[:prompt1], p.BlockSize)
	c2.enqueue(s)
	for {
		if _, _, ok := c2.step(); !ok {
			break
		}
	}
	s2 := &seq{promptTokens: len(ids2), maxTokens: 1, hashes: blockHashes(ids2, p.BlockSize)}
	c2.enqueue(s2)
	c2.step()
	if s2.cachedTokens != 992 {
		t.Fatalf("prompt-only cache: %d cached, want 992", s2.cachedTokens)
	}
}
