package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/internal/suggest"
)

// How each tool turns the same stream into numbers. The trace holds the raw
// facts, so any of these can be recomputed from any trace. Every set but
// llmreplay and seed reproduces a peer's published code (peer is true),
// read from that code: docs/METRICS.md, "Definition sets", names the
// repository, commit, file and function of each rule, and the conformance
// tests (conformance_*_test.go) hold each set to hand-computed values.
type (
	itlMode    int
	tpotMode   int
	streamMode int
	windowMode int
	eventMode  int
	endMode    int
	tokenMode  int
	noFirst    int
)

const (
	// itlPerToken: a chunk carrying k tokens after a gap g gives k samples
	// of g/k (llmreplay; SGLang's native backend, from the growth of its
	// meta_info.completion_tokens).
	itlPerToken itlMode = iota
	// itlPerChunk: one sample per gap between counted events whatever
	// their token counts (vLLM, SGLang's OpenAI backends).
	itlPerChunk
	// itlRequestMean: one sample per request, (e2e − ttft)/(tokens − 1)
	// (AIPerf).
	itlRequestMean
	// itlRequestSpan: one sample per request, (last − first)/(tokens − 1),
	// weighted by tokens − 1 (GuideLLM).
	itlRequestSpan
)

const (
	// tpotExclFirst: (e2e − ttft)/(tokens − 1), the first token excluded.
	tpotExclFirst tpotMode = iota
	// tpotPerToken: (last − first)/tokens, weighted by tokens (GuideLLM
	// 0.3: "includes the time to generate the first token" in its name,
	// not in its span).
	tpotPerToken
	// tpotFromStart: (last − send)/tokens, weighted by tokens: GuideLLM
	// 0.8's, TTFT included.
	tpotFromStart
)

const (
	// streamSpan: (tokens − 1)/(last token − first token) (the seeds' bench.py).
	streamSpan streamMode = iota
	// streamDecode: (tokens − 1)/(e2e − ttft) = 1/TPOT (AIPerf's per-user
	// output throughput; vLLM and SGLang report TPOT, whose inverse this is).
	streamDecode
	// streamE2E: tokens / e2e (GuideLLM's output_tokens_per_second of one
	// request).
	streamE2E
)

const (
	// windowLastToken: throughput windows run from the first send to the
	// last token received (llmreplay).
	windowLastToken windowMode = iota
	// windowDone: from the first send of any request to the last response
	// end of any, failed ones included (a benchmark's wall-clock duration:
	// vLLM, SGLang, the seeds).
	windowDone
	// windowOK: over successful requests only, from the first one's send
	// to the last one's end (AIPerf's benchmark_duration: max response
	// timestamp − min request timestamp of valid records).
	windowOK
	// windowGuide03 and windowGuide08: GuideLLM's rate distributions'
	// means over successful requests (peers.go).
	windowGuide03
	windowGuide08
)

const (
	// evContent: chunks carrying text or reasoning (llmreplay, AIPerf's
	// content_responses).
	evContent eventMode = iota
	// evVLLM: every event vLLM's client counts: content chunks, and the
	// content-less events before the first of them (the role-only first
	// event of a chat stream: an event with choices).
	evVLLM
	// evText: chunks carrying answer text only (SGLang's OpenAI backends,
	// GuideLLM: delta.content; reasoning_content is not read).
	evText
	// evSGLangNative: the first chunk with text, then every event whose
	// meta_info.completion_tokens grew (Chunk.Tokens > 0); events that
	// added no token are skipped.
	evSGLangNative
)

const (
	// endDone: a request ends when its response ended ([DONE] or EOF).
	endDone endMode = iota
	// endLastEvent: at its last counted event (vLLM's
	// most_recent_timestamp, AIPerf's content_responses[-1].perf_ns).
	endLastEvent
)

const (
	// tokServer: the server's count first (usage, per-chunk counts, its
	// tokenizer), else the tokenizer's (llmreplay, seed).
	tokServer tokenMode = iota
	// tokVLLM: usage completion_tokens when above 0, else the tokenizer's
	// count of the answer text (vLLM: `if not output_len`).
	tokVLLM
	// tokSGLang: usage completion_tokens when sent, else the max_tokens
	// asked for (SGLang's clients: output_len starts as the request's).
	tokSGLang
	// tokUsageElseMax: usage completion_tokens when above 0, else the
	// max_tokens asked for (GuideLLM 0.3: response_output_tokens or
	// request_output_tokens).
	tokUsageElseMax
	// tokGuide08: usage completion_tokens when a usage object came, else
	// the number of text events (GuideLLM 0.8's token_iterations).
	tokGuide08
	// tokTokenizer: the tokenizer's count of the joined answer text plus
	// that of the joined reasoning (AIPerf's output_token_count +
	// reasoning_token_count = output_sequence_length).
	tokTokenizer
)

const (
	// nfSkip: a successful response without a counted event has no TTFT
	// (AIPerf raises NoMetricValue; llmreplay).
	nfSkip noFirst = iota
	// nfZero: it has a TTFT of 0 (SGLang's clients leave ttft at 0.0;
	// GuideLLM 0.8's `time_to_first_token_ms or 0.0`).
	nfZero
	// nfFail: it is a failure (vLLM: "Never received a valid chunk to
	// calculate TTFT").
	nfFail
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

	// peer is true for the sets that reproduce a peer's code: the fields
	// below then say how, and every request is read a second time into a
	// peerView (peers.go). llmreplay and seed keep the one reading.
	peer    bool
	events  eventMode
	end     endMode
	tokens  tokenMode
	noFirst noFirst
	pct     pctMode
	// weighted: TPOT and ITL samples carry GuideLLM's weights (tokens,
	// tokens − 1).
	weighted bool
	// workloadInput: input tokens are the workload's count, not the
	// server's usage (SGLang's prompt_len, AIPerf's client-side ISL).
	workloadInput bool
	// ttftNeedsTokens: only requests with output tokens have a TTFT
	// (GuideLLM 0.3's total_with_output_first).
	ttftNeedsTokens bool
}

var definitionSets = map[string]DefinitionSet{
	"llmreplay": {
		Name: "llmreplay", Tool: "llmreplay",
		Source: "docs/METRICS.md",
		Notes:  "ITL per token (a k-token chunk gives k samples of gap/k); TPOT excludes the first token; per-stream = (tokens−1)/(last−first); aggregate window ends at the last token; tokens from server usage first; percentiles interpolate linearly.",
		itl:    itlPerToken, tpot: tpotExclFirst, stream: streamSpan, window: windowLastToken,
	},
	"vllm": {
		Name: "vllm", Tool: "vLLM bench serve",
		Source: "vllm-project/vllm vllm/benchmarks/serve.py (calculate_metrics, benchmark) and vllm/benchmarks/lib/endpoint_request_func.py (async_request_openai_chat_completions, async_request_openai_completions)",
		Notes:  "A request's events are its content chunks and the content-less events before the first (the chat stream's role-only event), as vLLM's client counts every event with choices: TTFT at the first, one ITL sample per gap, the request ends at its last event (not [DONE]); output_len from usage (when above 0), else the tokenizer's count of the answer text; TPOT = (latency−ttft)/(output_len−1); throughput = tokens / benchmark duration (first send to last response end, failures included); numpy percentiles.",
		itl:    itlPerChunk, tpot: tpotExclFirst, stream: streamDecode, window: windowDone,
		peer: true, events: evVLLM, end: endLastEvent, tokens: tokVLLM, noFirst: nfFail,
	},
	"sglang": {
		Name: "sglang", Tool: "SGLang bench_serving, OpenAI backends (sglang-oai, sglang-oai-chat, vllm, vllm-chat)",
		Source: "sgl-project/sglang python/sglang/benchmark/backends/oai_chat_client.py (OAIChatClient.make_request), oai_client.py (OAIClient.make_request), python/sglang/benchmark/metrics.py (do_calculate_metrics), runner.py (BenchmarkRunner.run)",
		Notes:  "Events are chunks with answer text (reasoning and role-only events are not read); one ITL sample per gap; the request ends at the last line read ([DONE]); output_len from usage, else the max_tokens asked for; input from the workload; TPOT = (latency−ttft)/(output_len−1); throughput over the benchmark duration; numpy percentiles.",
		itl:    itlPerChunk, tpot: tpotExclFirst, stream: streamDecode, window: windowDone,
		peer: true, events: evText, end: endDone, tokens: tokSGLang, noFirst: nfZero, workloadInput: true,
	},
	"sglang-native": {
		Name: "sglang-native", Tool: "SGLang bench_serving, native backend (sglang, sglang-native: POST /generate)",
		Source: "sgl-project/sglang python/sglang/benchmark/backends/sglang_client.py (SglangClient.make_request), python/sglang/benchmark/metrics.py (do_calculate_metrics), runner.py (BenchmarkRunner.run)",
		Notes:  "TTFT at the first event with text; after it, an event whose completion_tokens grew by k gives k ITL samples of gap/k, and one that added no token is skipped; the request ends at [DONE]; output_len from meta_info (usage), else the max_tokens asked for; throughput over the benchmark duration; numpy percentiles.",
		itl:    itlPerToken, tpot: tpotExclFirst, stream: streamDecode, window: windowDone,
		peer: true, events: evSGLangNative, end: endDone, tokens: tokSGLang, noFirst: nfZero, workloadInput: true,
	},
	"aiperf": {
		Name: "aiperf", Tool: "NVIDIA AIPerf",
		Source: "ai-dynamo/aiperf src/aiperf/metrics/types/ (ttft_metric.py TTFTMetric, request_latency_metric.py RequestLatencyMetric, inter_token_latency_metric.py InterTokenLatencyMetric, min_request_metric.py, max_response_metric.py); docs/metrics_reference.md",
		Notes:  "Events are content responses (text or reasoning); the request ends at its last content response; output tokens = the tokenizer's count of the answer plus that of the reasoning (OSL); ITL is one value per request, (latency − ttft)/(OSL − 1); per-user output throughput = 1/ITL; throughput and requests/s over successful requests only (first send to last content of a successful request); numpy percentiles.",
		itl:    itlRequestMean, tpot: tpotExclFirst, stream: streamDecode, window: windowOK,
		peer: true, events: evContent, end: endLastEvent, tokens: tokTokenizer, noFirst: nfSkip, workloadInput: true,
	},
	"guidellm": {
		Name: "guidellm", Tool: "GuideLLM 0.3.x",
		Source: "vllm-project/guidellm src/guidellm/benchmark/benchmark.py (GenerativeTextResponseStats, GenerativeBenchmark.from_stats), src/guidellm/backend/openai.py (_iterative_completions_request), src/guidellm/objects/statistics.py (DistributionSummary)",
		Notes:  "Events are chunks with answer text; TTFT to the first; the request ends at [DONE]; output tokens from usage, else the max_tokens asked for; TPOT = (last − first)/tokens weighted by tokens; ITL = (last − first)/(tokens − 1) weighted by tokens − 1; per-stream = tokens / latency; percentiles are nearest-rank (first value whose cumulative weight reaches p); throughput and requests/s are the means of GuideLLM's rate distributions over successful requests, which leave out the tokens of the run's last instant.",
		itl:    itlRequestSpan, tpot: tpotPerToken, stream: streamE2E, window: windowGuide03,
		peer: true, events: evText, end: endDone, tokens: tokUsageElseMax, noFirst: nfSkip, pct: pctGuide03, weighted: true, ttftNeedsTokens: true,
	},
	"guidellm-0.8": {
		Name: "guidellm-0.8", Tool: "GuideLLM 0.8",
		Source: "vllm-project/guidellm src/guidellm/schemas/request_stats.py (GenerativeRequestStats), src/guidellm/benchmark/schemas/generative/metrics.py (GenerativeMetrics.compile), src/guidellm/schemas/statistics.py (Percentiles.from_pdf, DistributionSummary.rate_distribution_from_timings)",
		Notes:  "As guidellm, except: TPOT = (last − send)/tokens, TTFT included; output tokens from usage, else the number of text events; equal values are combined before the nearest-rank search; throughput = all successful requests' tokens / (last token − first token, events 0.1 ms apart merged), nothing left out; requests/s = successful requests / (last response end − first send of any request).",
		itl:    itlRequestSpan, tpot: tpotFromStart, stream: streamE2E, window: windowGuide08,
		peer: true, events: evText, end: endDone, tokens: tokGuide08, noFirst: nfZero, pct: pctGuide08, weighted: true,
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
		return DefinitionSet{}, fmt.Errorf("unknown definition set %q%s: use one of %s", name, suggest.Phrase(name, DefinitionNames()), strings.Join(DefinitionNames(), ", "))
	}
	return d, nil
}
