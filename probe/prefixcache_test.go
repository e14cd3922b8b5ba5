package probe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// rec is a hand-made probe record: step (phase), TTFT in ms, and the
// server's usage with prompt and cached token counts (cached < 0: none).
func rec(step int, ttftMs float64, prompt, cached int) *trace.Record {
	r := &trace.Record{Phase: step, Sent: 1e6, Status: 200, FinishReason: "length", InputTokens: prompt,
		Chunks: []trace.Chunk{{T: 1e6 + int64(ttftMs*1e6), Text: "1"}}}
	if cached >= 0 {
		r.Usage = fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":%d}}`, prompt, cached)
	}
	return r
}

// TestJudgeByCounts: with the server's counts, each request is a hit at
// ≥ 80% of its prompt from cache (1008/1030 = 97.9%), a miss at ≤ 20%
// (16/1030 = 1.6%: a template block), a prefix hit between (512/1030 =
// 49.7%). A step passes when every request is what it expects, fails when
// most are not, and is unsure when mixed.
func TestJudgeByCounts(t *testing.T) {
	var recs []*trace.Record
	for range 6 {
		recs = append(recs, rec(0, 60, 1030, 16), rec(1, 40, 1030, 1008), rec(2, 60, 1030, 0))
	}
	// Step 4: 4 hits, 2 prefix hits: most are hits, not all: unsure.
	for i := range 6 {
		c := 1008
		if i < 2 {
			c = 512
		}
		recs = append(recs, rec(3, 40, 1030, c))
	}
	res := judge(recs)
	want := []struct{ actual, status, why string }{
		{Miss, "PASS", "6 of 6 requests MISS"},
		{Hit, "PASS", "6 of 6 requests HIT (the server's cached-token count; median 98% of the prompt from cache)"},
		{Miss, "PASS", "6 of 6 requests MISS"},
		{Hit, "UNSURE", "4 of 6 requests HIT"},
	}
	for i, w := range want {
		s := res.Steps[i]
		if s.Actual != w.actual || s.Status != w.status || !strings.Contains(s.Why, w.why) || s.By != "cached tokens" {
			t.Errorf("step %d: %+v, want %+v", i+1, s, w)
		}
	}
	if res.Verdict != "UNSURE" {
		t.Errorf("verdict %s, want UNSURE", res.Verdict)
	}
	// No cache at all: steps 2 and 4 fail, the verdict is FAIL.
	recs = recs[:0]
	for step := range 4 {
		for range 6 {
			recs = append(recs, rec(step, 60, 1030, 0))
		}
	}
	if res := judge(recs); res.Verdict != "FAIL" || res.Steps[1].Status != "FAIL" || res.Steps[1].Actual != Miss {
		t.Errorf("no cache: %+v", res)
	}
}

// TestJudgeByTTFT: without counts, a step is judged against the one before
// by the 95% interval of its median TTFT. With 6 values the interval of the
// median is the range of the 1st to 6th order statistic (2·(1/2)⁶ = 0.031
// ≤ 0.05), i.e. [min, max]: step 1 at 58–60 ms, step 2 at 40–42 ms (max 42 <
// min 58: a hit), step 3 at 58–61 (min 58 > max 42: a miss), step 4 at
// 55–60, overlapping step 3's [58, 61]: unsure.
func TestJudgeByTTFT(t *testing.T) {
	var recs []*trace.Record
	add := func(step int, ms ...float64) {
		for _, v := range ms {
			recs = append(recs, rec(step, v, 1030, -1))
		}
	}
	add(0, 58, 59, 59, 59.5, 60, 60)
	add(1, 40, 40.5, 41, 41, 41.5, 42)
	add(2, 58, 59, 59, 60, 60, 61)
	add(3, 55, 56, 58, 59, 60, 60)
	res := judge(recs)
	want := []struct{ actual, status string }{{Miss, "PASS"}, {Hit, "PASS"}, {Miss, "PASS"}, {"", "UNSURE"}}
	for i, w := range want {
		s := res.Steps[i]
		if s.Actual != w.actual || s.Status != w.status || s.By != "TTFT" {
			t.Errorf("step %d: %+v, want %+v", i+1, s, w)
		}
	}
	if s := res.Steps[1]; s.TTFTLo != 40 || s.TTFTHi != 42 {
		t.Errorf("step 2 interval [%v, %v], want [40, 42]", s.TTFTLo, s.TTFTHi)
	}
}
