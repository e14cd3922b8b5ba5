package probe

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

// sharedRecs is two hand-made rounds of ten: round 1 TTFT 40..49 ms with
// cached counts c1(i), round 2 TTFT 10..19 ms with c2(i) (< 0: no count).
func sharedRecs(c1, c2 func(i int) int) []*trace.Record {
	var recs []*trace.Record
	for i := range 10 {
		recs = append(recs, rec(0, float64(40+i), 350, c1(i)), rec(1, float64(10+i), 350, c2(i)))
	}
	return recs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestJudgeSharedByCounts works the figures out by hand. A hit has at
// least half the 286-token system prompt from the cache: 2·c ≥ 286.
// Round 1 misses (0), round 2 hits (272 each): 10 hits, 2,720 tokens
// saved. Medians of ten (mean of the 5th and 6th) with the 95% interval
// [x(2), x(9)] (Binomial(10, ½): P(X ≤ 1) = 11/1024 ≤ 0.025 < P(X ≤ 2) =
// 56/1024): cold 44.5 [41, 48], warm 14.5 [11, 18]; speed-up 44.5/14.5 =
// 3.069 in [41/18, 48/11] = [2.278, 4.364].
func TestJudgeSharedByCounts(t *testing.T) {
	res := judgeShared(sharedRecs(func(int) int { return 0 }, func(int) int { return 272 }), 2, 286)
	if res.Verdict != "PASS" || res.By != "cached tokens" || res.Rounds[1].Hits != 10 || res.Rounds[1].Cached != 2720 || res.Rounds[0].Hits != 0 {
		t.Fatalf("%+v", res)
	}
	if !near(res.Cold, 44.5) || res.ColdLo != 41 || res.ColdHi != 48 || !near(res.Warm, 14.5) || res.WarmLo != 11 || res.WarmHi != 18 {
		t.Errorf("cold %v [%v, %v] warm %v [%v, %v]", res.Cold, res.ColdLo, res.ColdHi, res.Warm, res.WarmLo, res.WarmHi)
	}
	if !near(res.SpeedUp, 44.5/14.5) || !near(res.SpeedUpLo, 41.0/18) || !near(res.SpeedUpHi, 48.0/11) {
		t.Errorf("speed-up %v [%v, %v]", res.SpeedUp, res.SpeedUpLo, res.SpeedUpHi)
	}
	var b bytes.Buffer
	if err := res.Render(&b); err != nil {
		t.Fatal(err)
	}
	testutil.Contains(t, "render", b.String(),
		"2      10        10     2720           14.5 [11.0, 18.0]",
		"hits: 10 of 20 requests; tokens saved: 2720",
		"speed-up 3.07 [2.28, 4.36]×",
		"shared system prompt (286 tokens): PASS: 10 of 10 requests after the first round hit",
	)

	// 143 tokens is exactly half: a hit; 142 is not. One miss in ten
	// after the first round: UNSURE; all missing: FAIL.
	res = judgeShared(sharedRecs(func(int) int { return 0 }, func(i int) int { return []int{143, 142}[min(i, 1)] }), 2, 286)
	if res.Verdict != "FAIL" || res.Rounds[1].Hits != 1 {
		t.Errorf("one hit of ten: %s, %d hits", res.Verdict, res.Rounds[1].Hits)
	}
	res = judgeShared(sharedRecs(func(int) int { return 0 }, func(i int) int { return []int{142, 143}[min(i, 1)] }), 2, 286)
	if res.Verdict != "UNSURE" || res.Rounds[1].Hits != 9 {
		t.Errorf("nine hits of ten: %s, %d hits", res.Verdict, res.Rounds[1].Hits)
	}
	// The miss of round 2 (TTFT 10) counts as cold: cold 11 values
	// 10,40..49 → median x(6) = 44, warm 11..19 → median 15.
	if !near(res.Cold, 44) || !near(res.Warm, 15) {
		t.Errorf("cold %v warm %v", res.Cold, res.Warm)
	}
}

// TestJudgeSharedByTTFT: no counts, so round 2's interval [11, 18] must
// lie below round 1's [41, 48] for a PASS; made to overlap (round 1 TTFT
// 15..24: [16, 23]) it is UNSURE, never FAIL.
func TestJudgeSharedByTTFT(t *testing.T) {
	none := func(int) int { return -1 }
	res := judgeShared(sharedRecs(none, none), 2, 286)
	if res.Verdict != "PASS" || res.By != "TTFT" || !near(res.SpeedUp, 44.5/14.5) {
		t.Errorf("%+v", res)
	}
	recs := sharedRecs(none, none)
	for _, r := range recs {
		if r.Phase == 0 {
			r.Chunks[0].T -= 25e6
		}
	}
	res = judgeShared(recs, 2, 286)
	if res.Verdict != "UNSURE" || !strings.Contains(res.Why, "0 of 1 later rounds") {
		t.Errorf("%+v", res)
	}
	var b bytes.Buffer
	if err := res.Render(&b); err != nil || !strings.Contains(b.String(), "hits: — (the server reports no cached-token count)") {
		t.Errorf("%v\n%s", err, b.String())
	}
}
