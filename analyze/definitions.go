package analyze

import (
	"fmt"
	"sort"
	"strings"
)

// How each tool turns the same stream into numbers. The trace holds the raw
// facts, so any of these can be recomputed from any trace.
type (
	itlMode    int
	tpotMode   int
	streamMode int
	windowMode int
)

const (
	// itlPerToken: a chunk carrying k tokens after a gap g gives k samples
	// of g/k (llmreplay).
	itlPerToken itlMode = iota
	// itlPerChunk: one sample per chunk gap whatever its token count
	// (vLLM and SGLang bench_serving).
	itlPerChunk
	// itlRequestMean: one sample per request, (e2e − ttft)/(tokens − 1)
	// (AIPerf).
	itlRequestMean
	// itlRequestSpan: one sample per request, (last − first)/(tokens − 1)
	// (GuideLLM).
	itlRequestSpan
)

const (
	// tpotExclFirst: (e2e − ttft)/(tokens − 1), the first token excluded.
	tpotExclFirst tpotMode = iota
	// tpotPerToken: (last − first)/tokens, the first token counted in the
	// denominator (GuideLLM documents its TPOT as including the first token).
	tpotPerToken
)

const (
	// streamSpan: (tokens − 1)/(last token − first token) (the seeds' bench.py).
	streamSpan streamMode = iota
	// streamDecode: (tokens − 1)/(e2e − ttft) = 1/TPOT (AIPerf's per-user
	// output throughput; vLLM and SGLang report TPOT, whose inverse this is).
	streamDecode
	// streamE2E: tokens / e2e (GuideLLM's output_tokens_per_second).
	streamE2E
)

const (
	// windowLastToken: throughput windows end at the last token received.
	windowLastToken windowMode = iota
	// windowDone: they end when the last response finished (a benchmark's
	// wall-clock duration).
	windowDone
)

// DefinitionSet is one tool's way of computing the shared metric names.
type DefinitionSet struct {
	Name   string
	Tool   string
	Source string // where the definition was read
	Notes  string

	itl    itlMode
	tpot   tpotMode
	stream streamMode
	window windowMode
	// tokenizerFirst prefers the client-side tokenizer count over the
	// server's usage.
	tokenizerFirst bool
}

var definitionSets = map[string]DefinitionSet{
	"llmreplay": {
		Name: "llmreplay", Tool: "llmreplay",
		Source: "docs/METRICS.md",
		Notes:  "ITL per token (a k-token chunk gives k samples of gap/k); TPOT excludes the first token; per-stream = (tokens−1)/(last−first); aggregate window ends at the last token; tokens from server usage first.",
		itl:    itlPerToken, tpot: tpotExclFirst, stream: streamSpan, window: windowLastToken,
	},
	"vllm": {
		Name: "vllm", Tool: "vLLM bench serve",
		Source: "vllm-project/vllm vllm/benchmarks/serve.py (calculate_metrics)",
		Notes:  "ITL = one sample per chunk gap; TPOT = (latency−ttft)/(output_len−1); throughput = tokens / benchmark duration (first send to last response end); output_len from server usage, else the tokenizer.",
		itl:    itlPerChunk, tpot: tpotExclFirst, stream: streamDecode, window: windowDone,
	},
	"sglang": {
		Name: "sglang", Tool: "SGLang bench_serving",
		Source: "sgl-project/sglang python/sglang/bench_serving.py (calculate_metrics); docs/developer_guide/bench_serving.md",
		Notes:  "Same shape as vLLM's: per-chunk ITL, TPOT excluding the first token, throughput over the benchmark duration; reports server token counts and a retokenized count side by side.",
		itl:    itlPerChunk, tpot: tpotExclFirst, stream: streamDecode, window: windowDone,
	},
	"aiperf": {
		Name: "aiperf", Tool: "NVIDIA AIPerf",
		Source: "ai-dynamo/aiperf aiperf/metrics/types/inter_token_latency_metric.py; docs/metrics_reference.md",
		Notes:  "ITL is one value per request, (request_latency − ttft)/(output_sequence_length − 1); per-user output throughput = 1/ITL; output tokens counted with a client-side tokenizer.",
		itl:    itlRequestMean, tpot: tpotExclFirst, stream: streamDecode, window: windowDone, tokenizerFirst: true,
	},
	"guidellm": {
		Name: "guidellm", Tool: "GuideLLM",
		Source: "vllm-project/guidellm src/guidellm/benchmark/benchmark.py (GenerativeTextResponseStats)",
		Notes:  "time_per_output_token = (last − first token)/output_tokens, documented as including the first token; inter_token_latency = (last − first)/(output_tokens − 1); output_tokens_per_second = output_tokens / request latency.",
		itl:    itlRequestSpan, tpot: tpotPerToken, stream: streamE2E, window: windowDone,
	},
	"seed": {
		Name: "seed", Tool: "the original bench.py of the per-stream / aggregate concurrency sweep",
		Source: "the local speed test the concurrency sweep comes from: per stream = (tokens−1)/(last token − first token), all streams together = all tokens / wall-clock time (cited in docs/METRICS.md)",
		Notes:  "Per-stream = (tokens−1)/(last − first token); aggregate = all tokens / wall time from the burst's release to its last response.",
		itl:    itlPerToken, tpot: tpotExclFirst, stream: streamSpan, window: windowDone,
	},
}

// DefinitionNames lists the definition sets in a stable order.
func DefinitionNames() []string {
	out := make([]string, 0, len(definitionSets))
	for n := range definitionSets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DefaultDefinitions is the definition set used when none is named.
const DefaultDefinitions = "llmreplay"

// LookupDefinitions returns the named definition set ("": DefaultDefinitions).
func LookupDefinitions(name string) (DefinitionSet, error) {
	if name == "" {
		name = DefaultDefinitions
	}
	d, ok := definitionSets[name]
	if !ok {
		return DefinitionSet{}, fmt.Errorf("unknown definition set %q: use one of %s", name, strings.Join(DefinitionNames(), ", "))
	}
	return d, nil
}
