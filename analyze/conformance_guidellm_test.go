package analyze

import (
	"testing"
)

// The guidellm set against GuideLLM 0.3.x (vllm-project/guidellm):
//
//   - src/guidellm/backend/openai.py, _iterative_completions_request: an
//     iteration is a line whose delta.content (text) is non-empty;
//     first_iter_time and last_iter_time are the first and last of them;
//     end_time is the time of the [DONE] line; start_time is taken right
//     before the request;
//   - src/guidellm/backend/response.py, ResponseSummary.output_tokens:
//     response_output_tokens (usage) or request_output_tokens
//     (max_tokens);
//   - src/guidellm/benchmark/benchmark.py, GenerativeTextResponseStats:
//     time_to_first_token_ms = first − start; time_per_output_token_ms =
//     (last − first)/output_tokens; inter_token_latency_ms = (last −
//     first)/(output_tokens − 1); output_tokens_per_second = output_tokens
//     / (end − start); GenerativeBenchmark.from_stats: TPOT weighted by
//     output_tokens, ITL by output_tokens − 1, TTFT over requests with
//     output tokens;
//   - src/guidellm/objects/statistics.py, DistributionSummary:
//     from_distribution_function's percentiles are the first value whose
//     cumulative probability (float cumsum of weight/Σweight) reaches p;
//     from_iterable_request_times spreads each request's tokens evenly
//     from its first token to its end, merges events within 1 µs, and its
//     mean leaves out the last event's count; from_request_times ("rate")
//     likewise for requests per second.
//
// The guidellm-0.8 set against GuideLLM 0.8 (src/guidellm/schemas/
// request_stats.py GenerativeRequestStats, src/guidellm/benchmark/
// schemas/generative/metrics.py GenerativeMetrics.compile,
// src/guidellm/schemas/statistics.py Percentiles.from_pdf and
// DistributionSummary.rate_distribution_from_timings): TPOT = (last −
// start)/output_tokens; output tokens from usage, else the iterations;
// equal values combined before the nearest-rank search; throughput = every
// token over the span of the token events (events 0.1 ms apart merged).

// TestGuideLLMRequestStats: roleStream (text at 60, 70, 90; [DONE] 100;
// sent 10; usage 4; prompt 20). ttft = 60 − 10 = 50; tpot = (90 − 60)/4 =
// 7.5; itl = 30/3 = 10; latency = 100 − 10 = 90; per-stream 4/0.090 =
// 44.444. Throughput: tokens at 60 (1) and spread every 40/3 ms to the end
// (100): 73.3, 86.7, 100; the window runs from the send (10) to the last
// event (100), whose token is left out: 3/0.090 = 33.333. Total tokens/s:
// the prompt's 20 at the first token and 23 more spread to the end, the
// last left out: (20 + 22)/0.090 = 466.67 (GuideLLM counts the prompt
// twice). Requests/s: events at the send (1) and the end (1), the last
// left out: 1/0.090.
//
// guidellm-0.8 on the same: tpot = (90 − 10)/4 = 20; tokens at 60 (1),
// then np.linspace(60, 90, 3)[1:] = 75, 90 with 1.5 each: 4/0.030 =
// 133.33; total adds the prompt's 20 at 60: 24/0.030 = 800; requests/s:
// the end over the window send (10) to end (100): 1/0.090.
func TestGuideLLMRequestStats(t *testing.T) {
	wantValues(t, group1(t, "guidellm", roleStream()), map[string]float64{
		"ttft": 50, "tpot": 7.5, "itl": 10, "e2e": 90, "per_stream_tps": 4 / 0.090, "output_tokens": 4,
		"aggregate_tps": 3 / 0.090, "total_tps": 42 / 0.090, "requests_per_s": 1 / 0.090,
	})
	wantValues(t, group1(t, "guidellm-0.8", roleStream()), map[string]float64{
		"ttft": 50, "tpot": 20, "itl": 10, "e2e": 90, "per_stream_tps": 4 / 0.090,
		"aggregate_tps": 4 / 0.030, "total_tps": 24 / 0.030, "requests_per_s": 1 / 0.090,
	})
}

// TestGuideLLMFailedFirstRequest: failedFirst; only r1 and r2 (successful)
// enter the rate distributions. 0.3: r1's tokens at 60, 73.3, 86.7, 100;
// r2's at 80, 100, 120, 140; the window runs from r1's send (10) to the
// last event (140), whose one token is left out: 7/0.130 = 53.846;
// requests: the first send (1), ends at 100 and 140, the last left out:
// 2/0.130. TTFT {50, 60}: nearest rank, the first whose cumulative 1/2
// reaches 0.5: 50 (numpy: 55); latency {90, 120} → 90.
//
// 0.8: tokens r1 60 (1), 75, 90 (1.5 each); r2 80 (1), 105, 130 (1.5
// each): 8/(130 − 60) = 114.29; requests over the measured window, the
// failed request's send (0) to the last end (140): 2/0.140.
func TestGuideLLMFailedFirstRequest(t *testing.T) {
	wantValues(t, group1(t, "guidellm", failedFirst()), map[string]float64{
		"aggregate_tps": 7 / 0.130, "requests_per_s": 2 / 0.130, "ttft": 50, "e2e": 90,
	})
	wantValues(t, group1(t, "guidellm-0.8", failedFirst()), map[string]float64{
		"aggregate_tps": 8 / 0.070, "requests_per_s": 2 / 0.140, "ttft": 50,
	})
}

// TestGuideLLMNearestRank: spreadTTFT(16), TTFTs 10 … 160, each 1/16:
// the first value whose cumulative probability reaches p: p50 → 8/16 →
// 80 (numpy 85), p90 → 15/16 → 150, p95 → 16/16 → 160, p10 → 2/16 →
// 20, p25 → 4/16 = 0.25 → 40. With 10 requests (10 … 100) the floating
// cumulative sum of nine 0.1s is 0.8999999999999999 < 0.9, so p90 is the
// tenth value, 100, and p80 (0.7999999999999999 after eight) the ninth,
// 90; p50 reaches exactly 0.5 at the fifth: 50.
func TestGuideLLMNearestRank(t *testing.T) {
	for _, set := range []string{"guidellm", "guidellm-0.8"} {
		g := groupWant(t, set, spreadTTFT(16), "ttft_p95", "ttft_p25")
		wantValues(t, g, map[string]float64{"ttft": 80, "ttft_p50": 80, "ttft_p90": 150, "ttft_p95": 160, "ttft_p10": 20, "ttft_p25": 40})
		g = groupWant(t, set, spreadTTFT(10), "ttft_p80")
		wantValues(t, g, map[string]float64{"ttft_p90": 100, "ttft_p80": 90, "ttft": 50})
	}
}

// TestGuideLLMWeights: weighedTokens (first text at 100 for all, sent 0).
// 0.3 TPOT: rA 20/2 = 10 (weight 2), rB 30/4 = 7.5 (4), rC 45/10 = 4.5
// (10): sorted 4.5, 7.5, 10 with cumulative 10/16, 14/16, 1: median 4.5
// (unweighted it would be 7.5), p90 10, mean (20 + 30 + 45)/16 = 5.9375.
// ITL: rA 20/1 = 20 (1), rB 30/3 = 10 (3), rC 45/9 = 5 (9): cumulative
// 9/13, 12/13, 1: median 5, p75 10, mean 95/13.
// 0.8 TPOT from the send: rA 120/2 = 60 (2), rB 130/4 = 32.5 (4), rC
// 145/10 = 14.5 (10): median 14.5, mean (120 + 130 + 145)/16 = 24.6875.
func TestGuideLLMWeights(t *testing.T) {
	g := groupWant(t, "guidellm", weighedTokens(), "itl_p75")
	wantValues(t, g, map[string]float64{
		"tpot": 4.5, "tpot_p90": 10, "tpot_mean": 95.0 / 16,
		"itl": 5, "itl_p75": 10, "itl_mean": 95.0 / 13,
	})
	if n := g.Values["tpot"].N; n != 16 {
		t.Errorf("tpot weight = %d, want 16 tokens", n)
	}
	wantValues(t, group1(t, "guidellm-0.8", weighedTokens()), map[string]float64{
		"tpot": 14.5, "tpot_mean": 24.6875, "itl": 5,
	})
}

// TestGuideLLMTokensWithoutUsage: 0.3 falls back to the max_tokens asked
// for (4 here: tpot 30/4); 0.8 to its iterations, the three text events
// (tpot (90 − 10)/3).
func TestGuideLLMTokensWithoutUsage(t *testing.T) {
	tt := roleStream()
	tt.records[0].Usage = ""
	wantValues(t, group1(t, "guidellm", tt), map[string]float64{"output_tokens": 4, "tpot": 7.5})
	g := group1(t, "guidellm-0.8", tt)
	wantValues(t, g, map[string]float64{"output_tokens": 3, "tpot": 80.0 / 3})
	if g.TokenSources[SourceEvents] != 1 {
		t.Errorf("sources = %v, want events 1", g.TokenSources)
	}
}

// TestGuideLLMMergesCloseEvents: two requests whose last tokens arrive
// 0.5 µs apart at the end of the run: GuideLLM 0.3 merges them into one
// event (within 1 µs) and leaves both tokens out, not one.
// r1: sent 0, text at 10 and 20, done 30 ms; r2: sent 0, text at 15 and
// 29.9995, done 30.0005 ms; usage 2 each. Tokens: r1 10 (1), 30 (1); r2
// 15 (1), 30.0005 (1). The last event opens at 30 ms and holds both
// end tokens: (4 − 2)/(0.030 − 0) = 66.667 tok/s.
func TestGuideLLMMergesCloseEvents(t *testing.T) {
	tt := spreadTTFT(2)
	r1, r2 := &tt.records[0], &tt.records[1]
	r1.Chunks[0].T, r1.Chunks[1].T, r1.Done = 10*msNs, 20*msNs, 30*msNs
	r2.Chunks[0].T, r2.Chunks[1].T, r2.Done = 15*msNs, 29_999_500, 30_000_500
	wantValues(t, group1(t, "guidellm", tt), map[string]float64{"aggregate_tps": 2 / 0.030})
}
