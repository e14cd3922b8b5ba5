package analyze

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// The aiperf set against AIPerf's metric classes (ai-dynamo/aiperf,
// src/aiperf/metrics/types/):
//
//   - ttft_metric.py, TTFTMetric: content_responses[0].perf_ns −
//     request.start_perf_ns (content: text or reasoning, not role-only or
//     usage-only events);
//   - request_latency_metric.py, RequestLatencyMetric:
//     content_responses[-1].perf_ns − start, the last content response,
//     not [DONE];
//   - output_sequence_length_metric.py, OutputSequenceLengthMetric:
//     output_token_count + reasoning_token_count, each the tokenizer's
//     count of the joined text (docs/metrics_reference.md);
//   - inter_token_latency_metric.py, InterTokenLatencyMetric: (latency −
//     ttft)/(OSL − 1) per request (OSL ≥ 2), the first chunk taken as one
//     token without --per-chunk-usage; output token throughput per user
//     = 1/ITL;
//   - min_request_metric.py / max_response_metric.py /
//     benchmark_duration_metric.py: the window runs from the first
//     request's start to the last response, over valid (successful)
//     records; output_token_throughput = Σ OSL / duration,
//     request_throughput = request_count / duration;
//   - MetricArray.to_result: np.percentile.

// TestAIPerfEndsAtLastContent: roleStream. Content responses "1" 60, ","
// 70, " 2" 90: ttft 50; latency 90 − 10 = 80; OSL = tokenizer("1, 2") = 4
// (and no reasoning); itl = (80 − 50)/3 = 10; per-user 1/itl = 100 tok/s;
// duration from the send (10) to the last content (90): 0.080 s → 4/0.080
// = 50 tok/s, 1/0.080 = 12.5 req/s; total with the client-side input
// (workload, 20): 24/0.080 = 300.
func TestAIPerfEndsAtLastContent(t *testing.T) {
	g := group1(t, "aiperf", roleStream())
	wantValues(t, g, map[string]float64{
		"ttft": 50, "e2e": 80, "output_tokens": 4, "itl": 10, "tpot": 10, "per_stream_tps": 100,
		"aggregate_tps": 50, "requests_per_s": 12.5, "total_tps": 300,
	})
}

// TestAIPerfFailedFirstRequest: failedFirst. Only valid records make the
// window: from r1's send (10) to r2's last content (130): 0.120 s →
// 8/0.120 = 66.667 tok/s and 2/0.120 = 16.667 req/s, where llmreplay's
// window starts at the failed request's send (0) and ends at the last
// token (130): 8/0.130; and its requests/s runs to the last response end
// (140): 2/0.140.
func TestAIPerfFailedFirstRequest(t *testing.T) {
	wantValues(t, group1(t, "aiperf", failedFirst()), map[string]float64{"aggregate_tps": 8 / 0.120, "requests_per_s": 2 / 0.120})
	wantValues(t, group1(t, "llmreplay", failedFirst()), map[string]float64{"aggregate_tps": 8 / 0.130, "requests_per_s": 2 / 0.140})
}

// TestAIPerfReasoningCountsAsContent: a reasoning model's stream:
// reasoning "Let" at 40, " me" at 50, then answer "1" at 60, "," at 70.
// AIPerf's TTFT counts reasoning: 40 − 10 = 30; OSL = 2 (reasoning:
// "Let", " me") + 2 (answer "1,") = 4; latency to the last content 70 −
// 10 = 60; itl = (60 − 30)/3 = 10.
func TestAIPerfReasoningCountsAsContent(t *testing.T) {
	tt := roleStream()
	r := &tt.records[0]
	r.Chunks = []trace.Chunk{bare(35), reason(40, "Let"), reason(50, " me"), chunk(60, "1", 0), chunk(70, ",", 0), bare(96)}
	g := group1(t, "aiperf", tt)
	wantValues(t, g, map[string]float64{"ttft": 30, "output_tokens": 4, "e2e": 60, "itl": 10})
}

// TestAIPerfPercentiles: spreadTTFT(16): np.percentile, p50 85, p90 at
// 13.5 → 145, p25 at 3.75 → 47.5.
func TestAIPerfPercentiles(t *testing.T) {
	g := groupWant(t, "aiperf", spreadTTFT(16), "ttft_p25")
	wantValues(t, g, map[string]float64{"ttft": 85, "ttft_p90": 145, "ttft_p25": 47.5})
}

// reason is a chunk carrying reasoning text at t ms.
func reason(tMs float64, text string) trace.Chunk {
	return trace.Chunk{T: int64(tMs * float64(msNs)), Bytes: 40 + len(text), Reasoning: text}
}
