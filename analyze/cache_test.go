package analyze

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// turnRec is one successful request of a hand-made conversation: its
// session and turn, the prompt the server counted, the cached tokens it
// reported (−1: no count) and the TTFT in ms, sent at sentMs.
func turnRec(id string, ph int, session string, turn, prompt, cached int, ttft, sentMs float64) trace.Record {
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":3}`, prompt)
	if cached >= 0 {
		usage = fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":%d}}`, prompt, cached)
	}
	s := sentMs
	return trace.Record{ID: id, Phase: ph, Session: session, Turn: turn, InputTokens: 50, SentInputTokens: prompt, MaxTokens: 3,
		Scheduled: int64(s * float64(msNs)), Sent: int64(s * float64(msNs)), Done: int64((s + ttft + 30) * float64(msNs)), Status: 200,
		Chunks: []trace.Chunk{chunk(s+ttft, "1", 1), chunk(s+ttft+10, ", 2", 1), chunk(s+ttft+20, ", 3", 1)},
		Usage:  usage, FinishReason: "length"}
}

// conversation is the hand-made run the cache metrics are worked out on:
// three sessions at concurrency 1 (cached −1 everywhere when counted is
// false: a server that reports no count).
//
//	session turn prompt cached TTFT
//	s1      1    100    0      60   cold
//	s1      2    300    96     50   warm
//	s1      3    500    288    40   warm
//	s2      1    300    0      100  cold
//	s2      2    500    288    60   warm
//	s2      3    700    480    70   warm, past the cold lengths
//	s3      1    500    0      140  cold
//
// The cold line through (100, 60), (300, 100), (500, 140) is exactly
// TTFT = 40 + 0.2·prompt ms, read on 100–500 tokens. prefill_saved:
// turn 2: s1 100−50 = 50, s2 140−60 = 80 (median 65, mean 65); turn 3:
// s1 140−40 = 100, s2 at 700 tokens left out; over all turns {50, 80,
// 100}: median 80. cache_speedup: turn 2 {100/50, 140/60} = {2, 2.333…}
// (mean 2.1666…), turn 3 {3.5}. cached_tokens: turn 1 0, turn 2
// 96+288 = 384, turn 3 288+480 = 768, the run 1,152.
func conversation(counted bool) testTrace {
	h := header("A", phase(0, 1, 50, 3, 1))
	h.Reference = ""
	c := func(n int) int {
		if counted {
			return n
		}
		return -1
	}
	return testTrace{h: h, records: []trace.Record{
		turnRec("s1-1", 0, "s1", 1, 100, c(0), 60, 0),
		turnRec("s1-2", 0, "s1", 2, 300, c(96), 50, 200),
		turnRec("s1-3", 0, "s1", 3, 500, c(288), 40, 400),
		turnRec("s2-1", 0, "s2", 1, 300, c(0), 100, 600),
		turnRec("s2-2", 0, "s2", 2, 500, c(288), 60, 800),
		turnRec("s2-3", 0, "s2", 3, 700, c(480), 70, 1000),
		turnRec("s3-1", 0, "s3", 1, 500, c(0), 140, 1200),
	}}
}

// TestByTurn: --by turn splits the hand-made conversation into its turns
// with each turn's TTFT, and the cache metrics come out as worked out in
// conversation's comment, with a note for the warm request left out.
func TestByTurn(t *testing.T) {
	res := analyzeTraces(t, Options{}, conversation(true))
	gs := res.Groups([]string{KeyTurn})
	if len(gs) != 3 {
		t.Fatalf("%d groups by turn, want 3", len(gs))
	}
	nan := math.NaN()
	t1 := findGroup(t, gs, map[string]any{KeyTurn: 1})
	wantValues(t, t1, map[string]float64{"requests_ok": 3, "ttft": 100, "ttft_min": 60, "ttft_max": 140,
		"cached_tokens": 0, "prefill_saved": nan, "cache_speedup": nan, "cache_hit_rate": 0})
	if t1.Notes != nil {
		t.Errorf("turn 1 (no warm requests) has notes %v", t1.Notes)
	}
	t2 := findGroup(t, gs, map[string]any{KeyTurn: 2})
	wantValues(t, t2, map[string]float64{"requests_ok": 2, "ttft": 55, "cached_tokens": 384,
		"prefill_saved": 65, "prefill_saved_mean": 65, "prefill_saved_min": 50, "prefill_saved_max": 80,
		"cache_speedup_mean": (2 + 140.0/60) / 2, "cache_speedup_min": 2,
		"cache_hit_rate_mean": (96.0/300 + 288.0/500) / 2})
	if t2.Values["prefill_saved"].N != 2 || t2.Notes != nil {
		t.Errorf("turn 2: prefill_saved over %d requests, notes %v", t2.Values["prefill_saved"].N, t2.Notes)
	}
	t3 := findGroup(t, gs, map[string]any{KeyTurn: 3})
	wantValues(t, t3, map[string]float64{"requests_ok": 2, "cached_tokens": 768, "prefill_saved": 100, "cache_speedup": 3.5})
	if n := t3.Notes["prefill_saved"]; t3.Values["prefill_saved"].N != 1 ||
		!strings.Contains(n, "1 of 2 warm requests left out") || !strings.Contains(n, "700–700 tokens") || !strings.Contains(n, "(100–500 tokens)") {
		t.Errorf("turn 3: prefill_saved over %d requests, note %q", t3.Values["prefill_saved"].N, n)
	}
	// A turn has no window of its own (its requests interleave with the
	// other turns'): no throughput per turn, where the phase has one.
	for _, g := range gs {
		if v := g.Values["aggregate_tps"]; v.Valid() {
			t.Errorf("turn %v: aggregate_tps %v, want none", g.Keys[KeyTurn], v.Value)
		}
	}
	// The run as a whole: every warm request within the cold lengths.
	all := res.Groups(nil)[0]
	wantValues(t, all, map[string]float64{"requests_ok": 7, "cached_tokens": 1152, "prefill_saved": 80,
		"prefill_saved_mean": (50 + 80 + 100) / 3.0, "cache_speedup": 140.0 / 60})
	if !all.Values["aggregate_tps"].Valid() {
		t.Error("the whole run has no aggregate_tps")
	}
	// With other keys, and through a claim's selector.
	if g := findGroup(t, res.Groups([]string{KeyConcurrency, KeyTurn}), map[string]any{KeyConcurrency: 1, KeyTurn: 2}); g.Values["requests_ok"].Value != 2 {
		t.Errorf("by concurrency, turn: turn 2 has %v requests", g.Values["requests_ok"].Value)
	}
	if g := res.Select(map[string]string{KeyTurn: "3"}); g == nil || !near(g.Values["prefill_saved"].Value, 100) {
		t.Errorf("select turn=3: %+v", g)
	}
	// A server that reports no count: later turns are warm, first turns
	// cold, so the same numbers (cached_tokens has nothing to add up).
	res = analyzeTraces(t, Options{}, conversation(false))
	gs = res.Groups([]string{KeyTurn})
	wantValues(t, findGroup(t, gs, map[string]any{KeyTurn: 2}), map[string]float64{"prefill_saved": 65, "cached_tokens": 0})
	wantValues(t, findGroup(t, gs, map[string]any{KeyTurn: 3}), map[string]float64{"prefill_saved": 100})
}

// TestByTurnSingleRequests: requests outside any session are turn 1, so a
// single-turn trace grouped by turn is one row holding every request; a
// phase whose single requests come before its sessions' keeps them in
// turn 1.
func TestByTurnSingleRequests(t *testing.T) {
	h := header("B", phase(0, 1, 100, 7, 1))
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{okRecord("a", 0, 0), okRecord("b", 0, 200), okRecord("c", 0, 400)}})
	gs := res.Groups([]string{KeyTurn})
	if len(gs) != 1 || gs[0].Keys[KeyTurn] != 1 || gs[0].Values["requests_ok"].Value != 3 || !near(gs[0].Values["ttft"].Value, 100) {
		t.Fatalf("single-turn trace by turn: %d groups, first %v", len(gs), gs[0].Keys)
	}
	// A single-turn phase is the whole run, so its window stays.
	if !gs[0].Values["aggregate_tps"].Valid() {
		t.Error("single-turn run by turn lost its aggregate_tps")
	}
	tt := conversation(true)
	tt.records = append([]trace.Record{turnRec("lone", 0, "", 0, 200, 0, 80, 0)}, tt.records...)
	gs = analyzeTraces(t, Options{}, tt).Groups([]string{KeyTurn})
	wantValues(t, findGroup(t, gs, map[string]any{KeyTurn: 1}), map[string]float64{"requests_ok": 4, "ttft_min": 60, "ttft": 90})
	wantValues(t, findGroup(t, gs, map[string]any{KeyTurn: 2}), map[string]float64{"requests_ok": 2})
}

// TestPrefillSavedAbsent: prefill_saved is absent, with a note saying why,
// whenever the cold line cannot be drawn or read where the warm requests
// are; never a number made up.
func TestPrefillSavedAbsent(t *testing.T) {
	mk := func(recs ...trace.Record) testTrace {
		h := header("C", phase(0, 1, 50, 3, 1))
		h.Reference = ""
		return testTrace{h: h, records: recs}
	}
	shared := mk(turnRec("a", 0, "", 0, 300, -1, 100, 0), turnRec("b", 0, "", 0, 500, -1, 140, 200),
		turnRec("c", 0, "", 0, 700, -1, 180, 400), turnRec("d", 0, "s", 2, 500, -1, 60, 600))
	shared.h.Options = map[string]string{"prefix": "shared"}
	for _, c := range []struct {
		name string
		tt   testTrace
		note string
	}{
		{"no cold", mk(turnRec("a", 0, "s", 2, 300, 96, 50, 0), turnRec("b", 0, "s", 3, 500, 288, 40, 200)), "no cold requests"},
		{"two cold", mk(turnRec("a", 0, "s", 1, 100, 0, 60, 0), turnRec("b", 0, "t", 1, 500, 0, 140, 200),
			turnRec("c", 0, "s", 2, 300, 96, 50, 400)), "only 2 cold requests"},
		{"one length", mk(turnRec("a", 0, "s", 1, 300, 0, 60, 0), turnRec("b", 0, "t", 1, 300, 0, 70, 200),
			turnRec("c", 0, "u", 1, 300, 0, 65, 400), turnRec("d", 0, "s", 2, 300, 96, 50, 600)), "one prompt length (300 tokens)"},
		{"outside", mk(turnRec("a", 0, "s", 1, 100, 0, 60, 0), turnRec("b", 0, "t", 1, 200, 0, 80, 200),
			turnRec("c", 0, "u", 1, 300, 0, 100, 400), turnRec("d", 0, "s", 2, 900, 96, 50, 600)), "every warm prompt (900–900 tokens) lies outside the cold requests' lengths (100–300 tokens)"},
		// No count, every prompt starting alike: a first turn may be warm,
		// so none is taken as cold.
		{"shared prefix, no count", shared, "no cold requests"},
	} {
		g := analyzeTraces(t, Options{}, c.tt).Groups(nil)[0]
		for _, m := range []string{"prefill_saved", "cache_speedup", "prefill_saved_p50"} {
			if v := g.Values[m]; v.Valid() {
				t.Errorf("%s: %s = %v, want absent", c.name, m, v.Value)
			}
		}
		if n := g.Notes["prefill_saved"]; !strings.Contains(n, c.note) {
			t.Errorf("%s: note %q, want %q", c.name, n, c.note)
		}
	}
}

// TestLineFitMerge: the one-pass line merged from parts is the line of
// the whole, at lengths where a naive Σx² would lose digits.
func TestLineFitMerge(t *testing.T) {
	var whole, a, b lineFit
	for i, x := range []float64{1e6, 1e6 + 100, 1e6 + 300, 1e6 + 600, 1e6 + 1000} {
		y := 40 + 0.2*(x-1e6)
		whole.add(x, y)
		if i < 2 {
			a.add(x, y)
		} else {
			b.add(x, y)
		}
	}
	a.merge(&b)
	for _, l := range []lineFit{whole, a} {
		if !near(l.at(1e6+500), 140) || l.lo != 1e6 || l.hi != 1e6+1000 || l.n != 5 {
			t.Errorf("fit %+v: at(1e6+500) = %v, want 140", l, l.at(1e6+500))
		}
	}
}

// TestPrefillScalingFirstTurns: how TTFT scales with the input length is
// fitted over a multi-turn run's first turns only, whose prompts are the
// phase's length. Hand-made: phases of 100 and 1,000 tokens, two sessions
// of two turns each; first turns take 0.1 ms a token (10 and 100 ms:
// exactly linear, k = 1), second turns 20 ms whatever their length (the
// cache served the conversation). Pooling the second turns in would pull
// k far below 1; with --by turn, turn 1 has k = 1 and turn 2 none.
func TestPrefillScalingFirstTurns(t *testing.T) {
	h := header("D", phase(0, 1, 100, 3, 1), phase(1, 1, 1000, 3, 1))
	h.Reference = ""
	var recs []trace.Record
	for ph, l := range []int{100, 1000} {
		for s := range 2 {
			id := fmt.Sprintf("p%d-s%d", ph, s)
			sent := float64(1000*ph + 400*s)
			recs = append(recs, turnRec(id+"-1", ph, id, 1, l, 0, 0.1*float64(l), sent),
				turnRec(id+"-2", ph, id, 2, l+80, l, 20, sent+200))
		}
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	g := res.Groups(nil)[0]
	if v := g.Values["ttft_exponent"]; !near(v.Value, 1) {
		t.Errorf("ttft_exponent %v, want 1 (first turns only)", v.Value)
	}
	sc := res.PrefillScaling()
	if len(sc) == 0 || sc[0].Metric != "ttft" || !near(sc[0].Exponent.Value, 1) {
		t.Errorf("prefill scaling %+v, want ttft k = 1", sc)
	}
	gs := res.Groups([]string{KeyTurn})
	if v := findGroup(t, gs, map[string]any{KeyTurn: 1}).Values["ttft_exponent"]; !near(v.Value, 1) {
		t.Errorf("turn 1: ttft_exponent %v, want 1", v.Value)
	}
	if v := findGroup(t, gs, map[string]any{KeyTurn: 2}).Values["ttft_exponent"]; v.Valid() {
		t.Errorf("turn 2: ttft_exponent %v, want none", v.Value)
	}
}
