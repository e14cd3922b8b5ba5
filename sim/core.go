package sim

import "time"

// seq is one request inside the engine model.
type seq struct {
	promptTokens int
	hashes       []uint64 // chained block hashes of the prompt
	// doneHashes are the chained block hashes of the prompt followed by
	// the whole answer: when the stream finishes, the blocks its answer
	// filled enter the prefix cache too (vLLM and SGLang keep generated
	// tokens' blocks), so a conversation's next turn, which resends the
	// prompt and the answer, finds both. nil: prompt blocks only.
	doneHashes []uint64
	maxTokens  int
	// noReuse is llama.cpp's cache_prompt: false: the prompt is computed
	// in full (no lookup) and still leaves its blocks in the cache.
	noReuse bool
	// arrive is when the request reaches the engine (unix ns): the
	// handler's receipt plus the profile's Overhead. The real-time driver
	// lets it join the first step that starts at or after it.
	arrive int64

	// Set by the core at admission.
	cachedTokens int
	prefillLeft  int
	admitted     bool

	produced int // tokens generated so far

	// out is how the real-time driver hands tokens to the HTTP writer;
	// nil in the virtual-time model used by the calibration.
	out *stream
}

// core is the engine model: pure state, no clock, no goroutines. Each call
// to step plans and applies one forward pass and says how long it takes;
// the driver (real time, or a virtual clock in tests and in the
// calibration) decides when its effects become visible.
//
// One step, in order:
//  1. Admit waiting requests into free slots (FIFO). Admission looks the
//     prompt up in the prefix cache; only blocks whose prefill has
//     finished are there, so identical prompts admitted together all miss,
//     as in vLLM and llama.cpp.
//  2. Every decoding stream contributes one token (b of them).
//  3. Prefill of admitted prompts fills what is left of the step's token
//     budget, oldest first (chunked prefill). A zero budget means all
//     pending prompts in this one step (MLX's batch prefill).
//  4. Duration = max(StepBase + StepPerSeq·b, StepCompute·b) +
//     PrefillPerToken·x + PrefillPerPair·pairs, with x the prompt tokens
//     computed in the step and pairs the earlier prompt tokens each of
//     them attends to (zero in every built-in profile).
//  5. At the end of the step each decoding stream has one more token; a
//     prompt whose prefill completed samples its first token and its
//     blocks enter the prefix cache. Streams at max_tokens leave and free
//     their slot.
type core struct {
	p       Profile
	cache   *prefixCache
	waiting []*seq
	prefill []*seq
	decode  []*seq

	// onAdmit, if set, is told each admission's prompt and cached tokens.
	onAdmit func(prompt, hit int)

	// scratch reused between steps
	emitted []*seq
	next    []*seq
}

func newCore(p Profile, cacheOn bool) *core {
	c := &core{p: p}
	if cacheOn && p.CacheBlocks > 0 && p.BlockSize > 0 {
		c.cache = newPrefixCache(p.CacheBlocks)
	}
	return c
}

func (c *core) enqueue(s *seq) { c.waiting = append(c.waiting, s) }

func (c *core) idle() bool { return len(c.waiting)+len(c.prefill)+len(c.decode) == 0 }

func (c *core) running() int { return len(c.prefill) + len(c.decode) }

// drop removes canceled streams (their client went away) so they stop
// costing step time and free their slot.
func (c *core) drop(gone func(*seq) bool) {
	filter := func(in []*seq) []*seq {
		out := in[:0]
		for _, s := range in {
			if !gone(s) {
				out = append(out, s)
			}
		}
		for i := len(out); i < len(in); i++ {
			in[i] = nil
		}
		return out
	}
	c.waiting = filter(c.waiting)
	c.prefill = filter(c.prefill)
	c.decode = filter(c.decode)
}

func (c *core) admit() {
	for len(c.waiting) > 0 && (c.p.Slots <= 0 || c.running() < c.p.Slots) {
		s := c.waiting[0]
		c.waiting[0] = nil
		c.waiting = c.waiting[1:]
		hit := 0
		if c.cache != nil && !s.noReuse {
			hit = c.cache.lookup(s.hashes) * c.p.BlockSize
		}
		// At least one prompt token is always computed: the first output
		// token needs a forward pass over something.
		if hit >= s.promptTokens {
			hit = s.promptTokens - 1
		}
		if hit < 0 {
			hit = 0
		}
		s.cachedTokens = hit
		s.prefillLeft = s.promptTokens - hit
		s.admitted = true
		if c.onAdmit != nil {
			c.onAdmit(s.promptTokens, hit)
		}
		c.prefill = append(c.prefill, s)
	}
}

// step plans and applies one forward pass. It returns its duration and the
// streams that received a token (valid until the next call); ok is false
// when there was nothing to do.
func (c *core) step() (d time.Duration, emitted []*seq, ok bool) {
	c.admit()
	b := len(c.decode)
	if b == 0 && len(c.prefill) == 0 {
		return 0, nil, false
	}
	budget := -1 // unlimited
	if c.p.PrefillBudget > 0 {
		budget = c.p.PrefillBudget - b
		if budget < 0 {
			budget = 0
		}
	}
	x := 0
	var pairs int64 // (prompt token, earlier prompt token) pairs computed
	c.emitted = c.emitted[:0]
	c.next = c.next[:0]
	// Decode: one token each.
	for _, s := range c.decode {
		s.produced++
		c.emitted = append(c.emitted, s)
		if s.produced < s.maxTokens {
			c.next = append(c.next, s)
		} else {
			c.finished(s)
		}
	}
	// Prefill, oldest first, within the budget.
	keep := c.prefill[:0]
	for _, s := range c.prefill {
		if budget == 0 {
			keep = append(keep, s)
			continue
		}
		n := s.prefillLeft
		if budget > 0 && n > budget {
			n = budget
		}
		pairs += prefillPairs(s.promptTokens-s.prefillLeft, n)
		s.prefillLeft -= n
		x += n
		if budget > 0 {
			budget -= n
		}
		if s.prefillLeft > 0 {
			keep = append(keep, s)
			continue
		}
		if c.cache != nil {
			c.cache.insert(s.hashes)
		}
		s.produced = 1
		c.emitted = append(c.emitted, s)
		if s.produced < s.maxTokens {
			c.next = append(c.next, s)
		} else {
			c.finished(s)
		}
	}
	for i := len(keep); i < len(c.prefill); i++ {
		c.prefill[i] = nil
	}
	c.prefill = keep
	c.decode, c.next = c.next, c.decode
	return c.p.stepTime(b, x, pairs), c.emitted, true
}

// finished puts a completed stream's answer blocks in the prefix cache.
func (c *core) finished(s *seq) {
	if c.cache != nil && s.doneHashes != nil {
		c.cache.insert(s.doneHashes)
	}
}

// kvBlocks is the number of KV-cache blocks the admitted streams hold.
func (c *core) kvBlocks() int {
	bs := c.p.BlockSize
	if bs <= 0 {
		bs = 16
	}
	n := 0
	for _, s := range c.prefill {
		n += (s.promptTokens - s.prefillLeft + bs - 1) / bs
	}
	for _, s := range c.decode {
		n += (s.promptTokens + s.produced + bs - 1) / bs
	}
	return n
}
