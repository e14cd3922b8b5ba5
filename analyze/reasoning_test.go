package analyze

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestReasoningMetrics: four requests of one run, worked out by hand
// (o200k_base counts "Let", " me", " think", "1" and "," as one token
// each).
//
//	rA: sent 10; role-only event 35; reasoning "Let" 40, " me" 50,
//	    " think" 55; answer "1" 60, "," 70; usage 6 of which 3 reasoning
//	    (completion_tokens_details): reasoning 3, answer 3;
//	    ttft_reasoning 30, ttft_answer 50.
//	rB: the same stream without usage: output 5 by the tokenizer,
//	    reasoning 3 (its chunks), answer 2; 30 and 50.
//	rC: sent 0; one reasoning chunk "Let me think" at 20 carrying the
//	    server's count 3, answer "1," at 45 carrying 2; usage output_tokens
//	    5 (no reasoning detail, as Anthropic's): reasoning 3 (the chunk's
//	    count), answer 2; ttft_reasoning 20, ttft_answer 45.
//	rD: sent 10; answer only, "1" 60, "," 70; usage 2: reasoning 0,
//	    answer 2; no ttft_reasoning; ttft_answer 50 = ttft.
//
// reasoning_tokens {3, 3, 3, 0}: median 3, mean 9/4; answer_tokens {3, 2,
// 2, 2}: median 2, mean 9/4; ttft_reasoning {30, 30, 20}: median 30, n 3;
// ttft_answer {50, 50, 45, 50}: median 50, min 45; ttft (first of either)
// {30, 30, 20, 50}: median 30.
func TestReasoningMetrics(t *testing.T) {
	stream := []trace.Chunk{bare(35), reason(40, "Let"), reason(50, " me"), reason(55, " think"), chunk(60, "1", 0), chunk(70, ",", 0)}
	rec := func(id string, sent float64, usage string, cs []trace.Chunk) trace.Record {
		return trace.Record{ID: id, Phase: 0, InputTokens: 20, MaxTokens: 6, Sent: int64(sent * float64(msNs)), Done: 80 * msNs, Status: 200,
			Chunks: cs, Usage: usage, FinishReason: "stop"}
	}
	rC := []trace.Chunk{{T: 20 * msNs, Bytes: 60, Reasoning: "Let me think", Tokens: 3}, {T: 45 * msNs, Bytes: 50, Text: "1,", Tokens: 2}}
	tt := testTrace{h: header("think", phase(0, 4, 20, 6, 0)), records: []trace.Record{
		rec("rA", 10, `{"completion_tokens":6,"prompt_tokens":20,"completion_tokens_details":{"reasoning_tokens":3}}`, stream),
		rec("rB", 10, "", stream),
		rec("rC", 0, `{"output_tokens":5,"input_tokens":20}`, rC),
		rec("rD", 10, `{"completion_tokens":2,"prompt_tokens":20}`, []trace.Chunk{chunk(60, "1", 0), chunk(70, ",", 0)}),
	}}
	tt.h.Reference = ""
	g := group1(t, "llmreplay", tt)
	wantValues(t, g, map[string]float64{
		"reasoning_tokens": 3, "reasoning_tokens_mean": 9.0 / 4, "answer_tokens": 2, "answer_tokens_mean": 9.0 / 4,
		"ttft_reasoning": 30, "ttft_answer": 50, "ttft_answer_min": 45, "ttft": 30,
	})
	if n := g.Values["ttft_reasoning"].N; n != 3 {
		t.Errorf("ttft_reasoning samples = %d, want 3 (rD streamed no reasoning)", n)
	}
}

// TestReasoningFromResponsesUsage: the Responses API reports reasoning in
// output_tokens_details: usage 7 with 4 reasoning → answer 3.
func TestReasoningFromResponsesUsage(t *testing.T) {
	tt := roleStream()
	tt.records[0].Usage = `{"output_tokens":7,"input_tokens":20,"output_tokens_details":{"reasoning_tokens":4}}`
	wantValues(t, group1(t, "llmreplay", tt), map[string]float64{"reasoning_tokens": 4, "answer_tokens": 3, "output_tokens": 7})
}
