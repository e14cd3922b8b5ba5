package analyze

import (
	"testing"
)

// The sglang and sglang-native sets against SGLang's bench_serving
// (sgl-project/sglang, python/sglang/benchmark/):
//
//   - backends/oai_chat_client.py, OAIChatClient.make_request (and
//     oai_client.py, OAIClient.make_request): an event counts only when
//     its delta.content (text) is non-empty; ttft at the first, one itl
//     per later one; latency is taken at every line read, so the request
//     ends at the last line ([DONE]); output_len = usage
//     completion_tokens, else the request's output_len (max_tokens).
//   - backends/sglang_client.py, SglangClient.make_request (backends
//     "sglang" and "sglang-native", POST /generate): ttft at the first
//     event with text; after it num_new_tokens = completion_tokens −
//     last_output_len, an event adding none is skipped (`continue`), one
//     adding k extends itl by k copies of gap/k.
//   - metrics.py, do_calculate_metrics: tpot = (latency − ttft)/
//     (output_len − 1) for output_len > 1; np.percentile / np.median;
//     output_throughput = Σ output_len / dur_s, input from prompt_len
//     (the dataset's, not usage); runner.py, BenchmarkRunner.run: dur_s
//     from before the first request to after the last.

// TestSGLangTextEventsOnly: roleStream through the OpenAI chat client:
// the role-only event has no content, so ttft = 60 − 10 = 50; itl per
// text event {10, 20} → median 15; latency to [DONE] 100 − 10 = 90;
// tpot = (90 − 50)/3 = 13.333; per-stream 3/0.040 = 75; dur_s 0.090:
// 4/0.090 and (4 + 20)/0.090 (prompt_len 20 from the workload).
func TestSGLangTextEventsOnly(t *testing.T) {
	g := group1(t, "sglang", roleStream())
	wantValues(t, g, map[string]float64{
		"ttft": 50, "itl": 15, "itl_mean": 15, "e2e": 90, "tpot": 40.0 / 3, "per_stream_tps": 75,
		"aggregate_tps": 4 / 0.090, "total_tps": 24 / 0.090, "requests_per_s": 1 / 0.090,
	})
}

// TestSGLangNativeSplitsMultiTokenEvents: nativeStream. ttft = 60 − 10 =
// 50; "," adds 1 token after 10 ms → itl 10; " 2 3" adds 3 after 30 ms →
// three samples of 10; the events at 103 and 104 add none and are
// skipped; so itl = {10, 10, 10, 10}. latency to [DONE] 110 − 10 = 100;
// output_len 5; tpot = (100 − 50)/4 = 12.5. The OpenAI-backend set reads
// the same stream one sample per event: {10, 30, 4} ("4" at 104 after
// " 2 3" at 100) → median 10, mean 44/3 (the per-chunk reading is 3×
// the per-token one for the 3-token event).
func TestSGLangNativeSplitsMultiTokenEvents(t *testing.T) {
	g := group1(t, "sglang-native", nativeStream())
	wantValues(t, g, map[string]float64{
		"ttft": 50, "itl": 10, "itl_mean": 10, "itl_max": 10, "e2e": 100, "output_tokens": 5, "tpot": 12.5,
	})
	if n := g.Values["itl"].N; n != 4 {
		t.Errorf("native itl samples = %d, want 4", n)
	}
	oai := group1(t, "sglang", nativeStream())
	wantValues(t, oai, map[string]float64{"itl": 10, "itl_mean": 44.0 / 3, "itl_max": 30})
}

// TestSGLangFailedFirstRequest: failedFirst. dur_s from before the failed
// request (sent 0) to the last response (140): 8/0.140, 2/0.140;
// latencies end at [DONE]: {90, 120} → 105.
func TestSGLangFailedFirstRequest(t *testing.T) {
	for _, set := range []string{"sglang", "sglang-native"} {
		g := group1(t, set, failedFirst())
		wantValues(t, g, map[string]float64{"aggregate_tps": 8 / 0.140, "requests_per_s": 2 / 0.140, "e2e": 105, "ttft": 55})
	}
}

// TestSGLangPercentiles: spreadTTFT(16): np.percentile as vLLM's, p50 85,
// p99 at position 14.85 → 158.5.
func TestSGLangPercentiles(t *testing.T) {
	g := groupWant(t, "sglang", spreadTTFT(16), "ttft_p95")
	wantValues(t, g, map[string]float64{"ttft": 85, "ttft_p99": 158.5, "ttft_p95": 152.5})
}

// TestSGLangTokensWithoutUsage: without usage SGLang's clients keep the
// output_len the request asked for (max_tokens 4), whatever arrived.
func TestSGLangTokensWithoutUsage(t *testing.T) {
	tt := roleStream()
	tt.records[0].Usage = ""
	tt.records[0].MaxTokens = 9
	g := group1(t, "sglang", tt)
	wantValues(t, g, map[string]float64{"output_tokens": 9, "tpot": 40.0 / 8})
	if g.TokenSources[SourceMaxTokens] != 1 {
		t.Errorf("sources = %v, want max_tokens 1", g.TokenSources)
	}
}
