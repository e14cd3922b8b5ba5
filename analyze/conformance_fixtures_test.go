package analyze

import (
	"fmt"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// The fixtures every conformance test reads, small enough to work out by
// hand. o200k_base counts "1" and "," as one token each and " 2" as two
// (a space, then the digit); joined, "1, 2" is four.

// bare is a content-less chunk at t ms: a role-only first event, a
// finish-only or a usage-only event, as the adapters record them (time
// and wire bytes only).
func bare(tMs float64) trace.Chunk {
	return trace.Chunk{T: int64(tMs * float64(msNs)), Bytes: 60}
}

// roleStream is one chat request the way an OpenAI-compatible server
// streams it: sent at 10 ms; a role-only event at 50; "1" at 60, "," at
// 70, " 2" (two tokens) at 90; a finish-only event at 95 and a usage-only
// event at 96; [DONE] at 100 ms. Usage: 4 completion, 20 prompt tokens;
// the workload's prompt is 20 tokens and max_tokens 4.
func roleStream() testTrace {
	return testTrace{h: header("chat", phase(0, 1, 20, 4, 0)), records: []trace.Record{{
		ID: "r0", Phase: 0, InputTokens: 20, MaxTokens: 4, Scheduled: 10 * msNs, Sent: 10 * msNs, Done: 100 * msNs, Status: 200,
		Chunks: []trace.Chunk{bare(50), chunk(60, "1", 0), chunk(70, ",", 0), chunk(90, " 2", 0), bare(95), bare(96)},
		Usage:  `{"completion_tokens":4,"prompt_tokens":20}`, FinishReason: "length",
	}}}
}

// withoutBare is tt with its content-less chunks removed: a trace
// recorded before role-only events were kept.
func withoutBare(tt testTrace) testTrace {
	out := tt
	out.records = nil
	for _, r := range tt.records {
		var cs []trace.Chunk
		for _, c := range r.Chunks {
			if c.Text != "" || c.Reasoning != "" || c.Tokens != 0 {
				cs = append(cs, c)
			}
		}
		r.Chunks = cs
		out.records = append(out.records, r)
	}
	return out
}

// failedFirst is a run whose first request failed:
//
//	r0: sent 0, failed at 5 ms (HTTP 503), no chunk;
//	r1: sent 10; "1" at 60, "," at 70, " 2" at 90; done 100; usage 4;
//	r2: sent 20; "1" at 80, "," at 100, " 2" at 130; done 140; usage 4.
//
// Prompts are 20 tokens (usage and workload alike).
func failedFirst() testTrace {
	rec := func(id string, sent, a, b, c, done float64) trace.Record {
		return trace.Record{ID: id, Phase: 0, InputTokens: 20, MaxTokens: 4, Scheduled: 0, Sent: int64(sent * float64(msNs)), Done: int64(done * float64(msNs)), Status: 200,
			Chunks: []trace.Chunk{chunk(a, "1", 0), chunk(b, ",", 0), chunk(c, " 2", 0)},
			Usage:  `{"completion_tokens":4,"prompt_tokens":20}`, FinishReason: "length"}
	}
	return testTrace{h: header("fail", phase(0, 3, 20, 4, 0)), records: []trace.Record{
		{ID: "r0", Phase: 0, InputTokens: 20, MaxTokens: 4, Scheduled: 0, Sent: 0, Done: 5 * msNs, Status: 503,
			Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 503"}},
		rec("r1", 10, 60, 70, 90, 100),
		rec("r2", 20, 80, 100, 130, 140),
	}}
}

// spreadTTFT is n requests released together at 0 whose first token
// arrives 10·i ms after the send (i = 1 … n): TTFTs 10, 20, …, 10·n ms.
// Each then streams "," 10 ms later and ends 5 ms after that; usage 2.
func spreadTTFT(n int) testTrace {
	h := header("spread", phase(0, n, 20, 2, 0))
	var recs []trace.Record
	for i := 1; i <= n; i++ {
		f := float64(10 * i)
		recs = append(recs, trace.Record{ID: fmt.Sprint("s", i), Phase: 0, InputTokens: 20, MaxTokens: 2, Sent: 0, Done: int64((f + 15) * float64(msNs)), Status: 200,
			Chunks: []trace.Chunk{chunk(f, "1", 0), chunk(f+10, ",", 0)}, Usage: `{"completion_tokens":2,"prompt_tokens":20}`, FinishReason: "length"})
	}
	return testTrace{h: h, records: recs}
}

// weighedTokens is three requests sent at 0 whose first text arrives at
// 100 ms, with usage counts 2, 4 and 10 and last text at 120, 130 and
// 145 ms (rC streams its 10 tokens in two chunks); each ends 5 ms after
// its last text.
func weighedTokens() testTrace {
	h := header("weights", phase(0, 3, 20, 10, 0))
	rec := func(id string, n int, ts ...float64) trace.Record {
		r := trace.Record{ID: id, Phase: 0, InputTokens: 20, MaxTokens: 10, Sent: 0, Status: 200,
			Usage: fmt.Sprintf(`{"completion_tokens":%d,"prompt_tokens":20}`, n), FinishReason: "length"}
		for _, t := range ts {
			r.Chunks = append(r.Chunks, chunk(t, "1", 0))
		}
		r.Done = int64((ts[len(ts)-1] + 5) * float64(msNs))
		return r
	}
	return testTrace{h: h, records: []trace.Record{
		rec("rA", 2, 100, 120),
		rec("rB", 4, 100, 110, 120, 130),
		rec("rC", 10, 100, 145),
	}}
}

// nativeStream is one request to SGLang's native /generate: sent at 10
// ms; "1" at 60 (completion_tokens 1), "," at 70 (2), " 2 3" at 100 (5:
// three tokens in one event), "" at 103 with no new token, "4" at 104 with
// no growth either (SGLang skips both), then the finish event at 108 and
// [DONE] at 110. meta_info's final completion_tokens is 5 (usage).
func nativeStream() testTrace {
	h := header("native", phase(0, 1, 20, 5, 0))
	h.API = "sglang"
	return testTrace{h: h, records: []trace.Record{{
		ID: "r0", Phase: 0, InputTokens: 20, MaxTokens: 5, Sent: 10 * msNs, Scheduled: 10 * msNs, Done: 110 * msNs, Status: 200,
		Chunks: []trace.Chunk{chunk(60, "1", 1), chunk(70, ",", 1), chunk(100, " 2 3", 3), bare(103), chunk(104, "4", 0), bare(108)},
		Usage:  `{"prompt_tokens":20,"completion_tokens":5,"cached_tokens":0}`, FinishReason: "length",
	}}}
}

// group1 analyses tt under the named set and returns its only group.
func group1(t *testing.T, set string, tt testTrace) *Group {
	t.Helper()
	res := analyzeTraces(t, Options{Definitions: set}, tt)
	gs := res.Groups(nil)
	if len(gs) != 1 {
		t.Fatalf("%d groups, want 1", len(gs))
	}
	return gs[0]
}

// groupWant analyses tt under the named set asking for extra statistics.
func groupWant(t *testing.T, set string, tt testTrace, want ...string) *Group {
	t.Helper()
	res := analyzeTraces(t, Options{Definitions: set}, tt)
	res.Want(want...)
	return res.Groups(nil)[0]
}
