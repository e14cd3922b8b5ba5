package analyze

import (
	"testing"
)

// The vllm set against vLLM's own code (vllm-project/vllm):
//
//   - vllm/benchmarks/lib/endpoint_request_func.py,
//     async_request_openai_chat_completions: every SSE event with
//     `choices` is a chunk; the first sets ttft, each later one appends
//     timestamp − most_recent_timestamp to itl; latency =
//     most_recent_timestamp − st, the last such event, not [DONE]; a
//     usage-only event (choices empty) is neither.
//   - vllm/benchmarks/serve.py, calculate_metrics: output_len = usage
//     completion_tokens, else (when 0 or absent) the tokenizer's count of
//     the generated text; tpot = (latency − ttft)/(output_len − 1) for
//     output_len > 1; np.percentile / np.median; output_throughput =
//     Σ output_len / dur_s, request_throughput = completed / dur_s, dur_s
//     = benchmark_duration from before the first request to after the
//     last (failed ones included) (serve.py, benchmark).

// TestVLLMRoleOnlyEvent: roleStream read by vLLM's client. Events: role
// at 50, "1" 60, "," 70, " 2" 90 (finish-only and usage-only events after
// the content are not counted: the trace cannot tell the one vLLM counts
// from the one it does not). ttft = 50 − 10 = 40; itl = {10, 10, 20}:
// median 10, mean 40/3, p90 at position 0.9·2 = 1.8 → 10 + 0.8·10 = 18;
// latency = 90 − 10 = 80; output_len = usage 4; tpot = (80 − 40)/3 =
// 13.333; per-stream 1/tpot = 3/0.040 = 75 tok/s; dur_s = first send (10)
// to the response end (100) = 0.090 s: throughput 4/0.090 = 44.444,
// total (4 + 20)/0.090 = 266.67, requests/s 1/0.090 = 11.111.
func TestVLLMRoleOnlyEvent(t *testing.T) {
	g := group1(t, "vllm", roleStream())
	wantValues(t, g, map[string]float64{
		"ttft": 40, "itl": 10, "itl_mean": 40.0 / 3, "itl_p90": 18, "e2e": 80, "output_tokens": 4,
		"tpot": 40.0 / 3, "per_stream_tps": 75, "aggregate_tps": 4 / 0.090, "total_tps": 24 / 0.090,
		"requests_per_s": 1 / 0.090, "goodput": 1 / 0.090,
	})
	if g.Values["itl"].N != 3 {
		t.Errorf("itl samples = %d, want 3 (the role event's gap is one)", g.Values["itl"].N)
	}
}

// TestRoleOnlyEventOnlyVLLMCounts: every other set skips content-less
// chunks, so a trace that keeps role-only, finish-only and usage-only
// events reads exactly as the same trace without them.
func TestRoleOnlyEventOnlyVLLMCounts(t *testing.T) {
	for _, set := range DefinitionNames() {
		if set == "vllm" {
			continue
		}
		with, without := group1(t, set, roleStream()), group1(t, set, withoutBare(roleStream()))
		for name, v := range without.Values {
			if w := with.Values[name]; !near(w.Value, v.Value) || w.N != v.N {
				t.Errorf("%s: %s = %v (n %d) with content-less chunks, %v (n %d) without", set, name, w.Value, w.N, v.Value, v.N)
			}
		}
	}
	// llmreplay's own reading, by hand: ttft 60 − 10 = 50, e2e 90, itl per
	// token {10, 10, 10} (" 2" after 20 ms carries 2), per-stream
	// 3/0.030 = 100, aggregate 4/(90 − 10 ms) = 50.
	wantValues(t, group1(t, "llmreplay", roleStream()), map[string]float64{
		"ttft": 50, "e2e": 90, "itl": 10, "itl_max": 10, "per_stream_tps": 100, "aggregate_tps": 50,
	})
}

// TestVLLMFailedFirstRequest: failedFirst. vLLM's dur_s starts before
// the first request, the failed one (sent at 0), and ends after the last
// response (140): 0.140 s. Σ output_len = 8 → 57.143 tok/s; completed 2 →
// 14.286 req/s. ttft {50, 60} → median 55; latency ends at the last
// chunk: {80, 110} → 95.
func TestVLLMFailedFirstRequest(t *testing.T) {
	g := group1(t, "vllm", failedFirst())
	wantValues(t, g, map[string]float64{
		"aggregate_tps": 8 / 0.140, "requests_per_s": 2 / 0.140, "ttft": 55, "e2e": 95,
		"requests_ok": 2, "requests_failed": 1,
	})
}

// TestVLLMPercentiles: spreadTTFT(16), TTFTs 10 … 160: np.percentile
// interpolates at position q·15: p50 = 80 + 0.5·10 = 85, p95 at 14.25 →
// 152.5, p10 at 1.5 → 25, p75 at 11.25 → 122.5, p99.9 at 14.985 →
// 159.85.
func TestVLLMPercentiles(t *testing.T) {
	g := groupWant(t, "vllm", spreadTTFT(16), "ttft_p95", "ttft_p75", "ttft_p99.9")
	wantValues(t, g, map[string]float64{"ttft": 85, "ttft_p50": 85, "ttft_p95": 152.5, "ttft_p10": 25, "ttft_p75": 122.5, "ttft_p99.9": 159.85})
}

// TestVLLMTokensFallBackToTheText: without usage, output_len is the
// tokenizer's count of the generated text "1, 2", four tokens, whatever
// the chunks: tpot = (80 − 40)/3 again.
func TestVLLMTokensFallBackToTheText(t *testing.T) {
	tt := roleStream()
	tt.records[0].Usage = ""
	g := group1(t, "vllm", tt)
	wantValues(t, g, map[string]float64{"output_tokens": 4, "tpot": 40.0 / 3})
	if g.TokenSources[SourceTokenizer] != 1 {
		t.Errorf("sources = %v, want tokenizer 1", g.TokenSources)
	}
}

// TestVLLMNoEventIsAFailure: a response with no event at all is, to
// vLLM's client, "Never received a valid chunk": not completed, so
// nothing of it enters the metrics or the request rate.
func TestVLLMNoEventIsAFailure(t *testing.T) {
	tt := failedFirst()
	tt.records = append(tt.records, tt.records[1])
	tt.records[3].ID, tt.records[3].Chunks, tt.records[3].Usage = "empty", nil, ""
	g := group1(t, "vllm", tt)
	wantValues(t, g, map[string]float64{"requests_per_s": 2 / 0.140, "aggregate_tps": 8 / 0.140})
	if g.Values["ttft"].N != 2 {
		t.Errorf("ttft samples = %d, want 2", g.Values["ttft"].N)
	}
}
