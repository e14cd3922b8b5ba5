package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Profile is one engine-and-hardware combination the simulator mimics.
// docs/SIMULATOR.md derives every number from the seeds' published
// figures.
type Profile struct {
	Name        string
	Description string
	// Instant disables the engine model: every token is written as fast as
	// the machine allows, with no slots and no queue. For measuring the
	// client itself.
	Instant bool
	// TimeScale is the factor Scaled multiplied every duration by (0: not
	// scaled, the same as 1); the simulator reports it on /metrics.
	TimeScale float64
	// Slots is the number of requests that run at once (llama.cpp -np,
	// vLLM max_num_seqs); 0 means unlimited. Others wait in FIFO order.
	Slots int
	// A decode step for b streams takes StepBase + b·StepPerSeq: reading
	// the weights once per step (memory bound) plus per-stream compute
	// and KV reads.
	StepBase   time.Duration
	StepPerSeq time.Duration
	// StepCompute is the roofline's other side: past some batch size a
	// step is compute bound and costs StepCompute per stream, so the
	// aggregate decode rate levels off at 1/StepCompute.
	StepCompute time.Duration
	// PrefillPerToken is the cost of one uncached prompt token in a step.
	PrefillPerToken time.Duration
	// PrefillPerPair is attention's quadratic term: each computed prompt
	// token also costs this per earlier token of its prompt (cached ones
	// included, as attention reads them), so a whole prompt of L tokens
	// costs PrefillPerPair·L(L−1)/2 on top of PrefillPerToken·L. No
	// built-in profile sets it (real engines' kernels keep prefill close
	// to linear at these lengths); Config.QuadraticPrefill switches it on
	// as a fault, for a server whose prefill time grows with the square of
	// the input.
	PrefillPerPair time.Duration
	// PrefillBudget is the most tokens (decode tokens included) one step
	// processes, as vLLM's max_num_batched_tokens or llama.cpp's n_batch;
	// 0 prefills every pending prompt in one step (MLX batch generate).
	PrefillBudget int
	// Overhead is the fixed latency a request spends before the engine
	// sees it (HTTP, tokenization, scheduling in the API server).
	Overhead time.Duration
	// BatchWindow is how long an idle engine waits after the first arrival
	// before its first step, so requests released together (which reach
	// the engine a few milliseconds apart over HTTP) start in the same
	// step, as the model assumes.
	BatchWindow time.Duration
	// BlockSize is the prefix-cache and KV-cache block in tokens.
	BlockSize int
	// CacheBlocks bounds the prefix cache (LRU); KVBlocks is the simulated
	// KV-cache size the usage ratio on /metrics is computed against.
	CacheBlocks int
	KVBlocks    int
}

// String is the one-line summary `llmreplay sim --list` prints.
func (p Profile) String() string {
	if p.Instant {
		return fmt.Sprintf("%-22s %s\n%22s unlimited slots, every token written at once", p.Name, p.Description, "")
	}
	slots := "unlimited"
	if p.Slots > 0 {
		slots = fmt.Sprint(p.Slots)
	}
	budget := "all pending prompts"
	if p.PrefillBudget > 0 {
		budget = fmt.Sprintf("%d tok", p.PrefillBudget)
	}
	step := fmt.Sprintf("%v+%v·b", p.StepBase, p.StepPerSeq)
	if p.StepCompute > 0 {
		step = fmt.Sprintf("max(%s, %v·b)", step, p.StepCompute)
	}
	prefill := fmt.Sprintf("%v/tok", p.PrefillPerToken)
	if p.PrefillPerPair > 0 {
		prefill += fmt.Sprintf("+%v/tok·earlier tok", p.PrefillPerPair)
	}
	return fmt.Sprintf("%-22s %s\n%22s slots=%s step=%s prefill=%s budget/step=%s overhead=%v window=%v block=%d cache=%d blocks",
		p.Name, p.Description, "", slots, step, prefill, budget, p.Overhead, p.BatchWindow, p.BlockSize, p.CacheBlocks)
}

// Profiles lists the built-in profiles, the default first.
func Profiles() []Profile {
	return []Profile{
		{
			Name:            "vllm-rtx5090-bf16",
			Description:     "vLLM, Qwen3.5-2B bf16, one RTX 5090 (seed 000, 2026-10-23)",
			Slots:           256,
			StepBase:        3085 * time.Microsecond,
			StepPerSeq:      10 * time.Microsecond,
			StepCompute:     110 * time.Microsecond,
			PrefillPerToken: 17200 * time.Nanosecond,
			PrefillBudget:   2048,
			Overhead:        16 * time.Millisecond,
			BatchWindow:     20 * time.Millisecond,
			BlockSize:       16,
			CacheBlocks:     65536,
			KVBlocks:        65536,
		},
		{
			Name:            "vllm-rtx5090-fp8",
			Description:     "vLLM, Qwen3.5-2B FP8 (--quantization fp8), one RTX 5090 (seed 000)",
			Slots:           256,
			StepBase:        2545 * time.Microsecond,
			StepPerSeq:      20 * time.Microsecond,
			PrefillPerToken: 18 * time.Microsecond,
			PrefillBudget:   2048,
			Overhead:        4 * time.Millisecond,
			BatchWindow:     20 * time.Millisecond,
			BlockSize:       16,
			CacheBlocks:     65536,
			KVBlocks:        65536,
		},
		{
			Name:            "llamacpp-rtx5090-q4km",
			Description:     "llama.cpp llama-server, Qwen3.5-2B Q4_K_M, one RTX 5090, -np 32 (seed 000)",
			Slots:           32,
			StepBase:        1740 * time.Microsecond,
			StepPerSeq:      300 * time.Microsecond,
			StepCompute:     550 * time.Microsecond,
			PrefillPerToken: 180 * time.Microsecond,
			PrefillBudget:   2048,
			BatchWindow:     18 * time.Millisecond,
			BlockSize:       64,
			CacheBlocks:     4096,
			KVBlocks:        1024,
		},
		{
			Name:            "mlx-m3ultra-4bit",
			Description:     "mlx-lm batch generation in process, Qwen3.5-2B 4bit, Mac Studio M3 Ultra (seed 000)",
			Slots:           0,
			StepBase:        3150 * time.Microsecond,
			StepPerSeq:      520 * time.Microsecond,
			PrefillPerToken: 110 * time.Microsecond,
			PrefillBudget:   0,
			BatchWindow:     20 * time.Millisecond,
			BlockSize:       64,
			CacheBlocks:     4096,
			KVBlocks:        4096,
		},
		{
			Name:        "fast",
			Description: "no modelled delay: measures the client, not a server",
			Instant:     true,
			BlockSize:   16,
			CacheBlocks: 65536,
			KVBlocks:    65536,
		},
	}
}

// LookupProfile returns the built-in profile called name.
func LookupProfile(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fielderr.New("sim", "Profile", fmt.Sprintf("%q is not a simulator profile", name), "use one of "+strings.Join(names, ", "))
}

// stepTime is the duration of one forward pass over b decoding streams and
// x prompt tokens, which attend to pairs earlier prompt tokens in all.
func (p Profile) stepTime(b, x int, pairs int64) time.Duration {
	d := p.StepBase + time.Duration(b)*p.StepPerSeq
	if c := time.Duration(b) * p.StepCompute; c > d {
		d = c
	}
	return d + time.Duration(x)*p.PrefillPerToken + time.Duration(pairs)*p.PrefillPerPair
}

// prefillPairs is how many (token, earlier token) pairs of one prompt a
// prefill chunk of n tokens starting at position from computes:
// Σ_{i=from}^{from+n−1} i = n·from + n(n−1)/2. Summed over the chunks of
// a whole L-token prompt it is L(L−1)/2, whatever the chunking.
func prefillPairs(from, n int) int64 {
	return int64(n)*int64(from) + int64(n)*int64(n-1)/2
}
