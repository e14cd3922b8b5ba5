package analyze

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// okRecord is a well-behaved count-up response: text "1" "," " 2" "," " 3"
// (o200k: 1+1+2+1+2 = 7 tokens) over 40 ms, usage honest, max_tokens 7.
func okRecord(id string, ph int, sentMs float64) trace.Record {
	s := sentMs
	return trace.Record{ID: id, Phase: ph, InputTokens: 100, MaxTokens: 7,
		Scheduled: int64(s * float64(msNs)), Sent: int64(s * float64(msNs)), Done: int64((s + 150) * float64(msNs)), Status: 200,
		Chunks: []trace.Chunk{chunk(s+100, "1", 0), chunk(s+110, ",", 0), chunk(s+120, " 2", 0), chunk(s+130, ",", 0), chunk(s+140, " 3", 0)},
		Usage:  `{"completion_tokens":7}`, FinishReason: "length"}
}

func TestCleanTraceHasNoWarnings(t *testing.T) {
	h := header("clean", phase(0, 1, 100, 7, 0))
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{okRecord("a", 0, 0), okRecord("b", 0, 200)}})
	doc := NewDocument(res, []string{KeyConcurrency})
	if len(doc.Warnings) != 0 {
		t.Fatalf("clean trace warned: %+v", doc.Warnings)
	}
}

func TestRequestWarnings(t *testing.T) {
	cases := []struct {
		name   string
		code   string
		modify func(r *trace.Record)
		check  func(t *testing.T, w *Warning)
	}{
		{
			// Everything in one chunk at the end: the last chunk carries
			// 7/7 = 100% of the tokens (> 50%); one chunk has no arrival
			// rate (0).
			name: "not streamed", code: WarnNotStreamed,
			modify: func(r *trace.Record) { r.Chunks = []trace.Chunk{chunk(140, "1, 2, 3", 0)} },
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["max_last_chunk_share"] != 1.0 || w.Evidence["max_arrival_tps"] != 0.0 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// Five chunks flushed together at 140 ms: the last carries 2 of 7
			// tokens (29% ≤ 50%), but the 6 tokens after the first chunk
			// arrived within 0.1 ms: 6 / 0.0001 s = 60,000 tok/s > 20,000.
			name: "flushed at the end", code: WarnNotStreamed,
			modify: func(r *trace.Record) {
				for i := range r.Chunks {
					r.Chunks[i].T = int64((140 + 0.025*float64(i)) * float64(msNs))
				}
			},
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["max_last_chunk_share"] != 0.286 || w.Evidence["max_arrival_tps"] != 60000.0 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// Usage says 14 while the text is 7 bytes ("1" "," " 2" "," " 3")
			// in 5 chunks. The trace has no count of the model's own (no
			// server tokenizer count, o200k is only the default), so the
			// bounds judge: at most 7 bytes + 3 = 10 tokens; 14 > 10 is
			// (14−10)/14 = 0.286 past the bound.
			name: "usage mismatch", code: WarnUsageMismatch,
			modify: func(r *trace.Record) { r.Usage = `{"completion_tokens":14}` },
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["example_server_tokens"] != 14 || w.Evidence["example_min_tokens"] != 5 || w.Evidence["example_max_tokens"] != 10 ||
					w.Evidence["max_relative_difference"] != 0.286 || w.Evidence["judgement"] != JudgeBounds {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// 7 tokens with 0.2 ms between first and last chunk:
			// (7−1)/0.0002 s = 30,000 tok/s > 20,000.
			name: "implausible speed", code: WarnImplausible,
			modify: func(r *trace.Record) {
				for i := range r.Chunks {
					r.Chunks[i].T = 100*msNs + int64(i)*50_000
				}
			},
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["max_tokens_per_s"] != 30000.0 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// Normal timing (150 tok/s) but 20 MB per chunk: 5 chunks = 100 MB
			// between first and last chunk 40 ms apart = 2.5 GB/s > 10 Gbit/s.
			name: "faster than the network", code: WarnImplausible,
			modify: func(r *trace.Record) {
				for i := range r.Chunks {
					r.Chunks[i].Bytes = 20_000_000
				}
			},
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["max_bytes_per_s"] != 2.5e9 || w.Evidence["max_tokens_per_s"] != 150.0 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// max_tokens 20 but 7 tokens came back, finish reason "stop".
			name: "stopped early", code: WarnStoppedEarly,
			modify: func(r *trace.Record) { r.MaxTokens = 20; r.FinishReason = "stop" },
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["min_tokens"] != 7 || w.Evidence["finish_reasons"].(map[string]int)["stop"] != 1 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
		{
			// "1, 2, 7" shares "1, 2, " (6 bytes) with the reference: 6/7 =
			// 0.857 < 0.9, so it did not count; over the run, with the good
			// request's 7 valid bytes, (6+7)/14 = 0.929 of the output is valid.
			name: "did not count", code: WarnDidNotCount,
			modify: func(r *trace.Record) { r.Chunks[4].Text = " 7" },
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["valid_output_share"] != 0.929 {
					t.Errorf("evidence %v", w.Evidence)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := header("w", phase(0, 1, 100, 7, 0))
			r := okRecord("bad", 0, 0)
			c.modify(&r)
			res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{r, okRecord("good", 0, 200)}})
			g := res.Groups([]string{KeyConcurrency})[0]
			w := hasWarning(g.Warnings, c.code)
			if w == nil {
				t.Fatalf("no %s warning; got %v", c.code, g.WarningCodes)
			}
			if w.Evidence["n_requests"] != 1 || w.Evidence["example"] != "bad" {
				t.Errorf("evidence should name 1 request, example bad: %v", w.Evidence)
			}
			c.check(t, w)
			for _, other := range g.Warnings {
				if other.Code != c.code && !(c.code == WarnImplausible && other.Code == WarnNotStreamed) && !(c.name == "flushed at the end" && other.Code == WarnImplausible) {
					t.Errorf("unexpected extra warning %s: %s", other.Code, other.Message)
				}
			}
		})
	}
}

// TestLongPrefillStillStreams: a 32k-token prompt's prefill makes TTFT most
// of E2E, but the tokens arrive spread out, so the response streamed.
// TTFT 9,000 ms of E2E 9,050 ms = 0.994 (the old TTFT-share rule flagged
// ≥ 0.9); the 6 tokens after the first chunk took 40 ms: 150 tok/s, far
// below 20,000, and the last chunk carries 2/7 = 29% ≤ 50%.
func TestLongPrefillStillStreams(t *testing.T) {
	h := header("long", phase(0, 1, 32000, 7, 0))
	r := okRecord("long", 0, 0)
	r.InputTokens = 32000
	for i := range r.Chunks {
		r.Chunks[i].T = int64((9000 + 10*float64(i)) * float64(msNs))
	}
	r.Done = 9050 * msNs
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{r}})
	if w := hasWarning(res.Groups([]string{KeyConcurrency})[0].Warnings, WarnNotStreamed); w != nil {
		t.Fatalf("a streamed response after a long prefill was flagged: %+v", w)
	}
}

func TestErrorsClustered(t *testing.T) {
	// Input 100: 2 of 2 succeed; input 40000: 2 of 2 fail with HTTP 400 —
	// the seeds' 32,768-token wall.
	h := header("wall", phase(0, 1, 100, 7, 0), phase(1, 1, 40000, 7, 0))
	fail := func(id string) trace.Record {
		return trace.Record{ID: id, Phase: 1, Sent: 500 * msNs, Scheduled: 500 * msNs, Done: 501 * msNs, Status: 400,
			Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "400"}}
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{okRecord("a", 0, 0), okRecord("b", 0, 200), fail("c"), fail("d")}})
	w := hasWarning(res.Warnings, WarnErrorsClustered)
	if w == nil {
		t.Fatalf("no errors_clustered warning: %+v", res.Warnings)
	}
	if w.Evidence["key"] != KeyInputTokens || w.Evidence["failing"].([]int)[0] != 40000 || w.Evidence["clean"].([]int)[0] != 100 {
		t.Errorf("evidence %v", w.Evidence)
	}
}

// slowingRecords are one record in each of phases 0, 1 and 2, a second
// apart, whose chunks are 10, 20 and 40 ms apart.
func slowingRecords() []trace.Record {
	var recs []trace.Record
	for ph, step := range []float64{10, 20, 40} {
		r := okRecord("r", ph, float64(ph)*1000)
		for i := range r.Chunks {
			r.Chunks[i].T = int64((float64(ph)*1000 + 100 + float64(i)*step) * float64(msNs))
		}
		r.Done = r.Chunks[4].T + msNs
		recs = append(recs, r)
	}
	return recs
}

func TestSlowingDown(t *testing.T) {
	// Three repeats at concurrency 1; per-stream (7−1)/(last−first): the
	// chunk spacing grows 10 → 20 → 40 ms, so 6/0.040 = 150, 6/0.080 = 75,
	// 6/0.160 = 37.5 tok/s: the last is 25% of the first (< 80%).
	h := header("slow", phase(0, 1, 100, 7, 0), phase(1, 1, 100, 7, 1), phase(2, 1, 100, 7, 2))
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: slowingRecords()})
	w := hasWarning(res.Warnings, WarnSlowingDown)
	if w == nil {
		t.Fatalf("no slowing_down warning: %+v", res.Warnings)
	}
	got := w.Evidence["per_stream_tps_median_by_repeat"].([]float64)
	if len(got) != 3 || got[0] != 150 || got[1] != 75 || got[2] != 37.5 {
		t.Errorf("evidence %v", got)
	}
	g := res.Groups([]string{KeyConcurrency})[0]
	if hasWarning(g.Warnings, WarnSlowingDown) == nil {
		t.Error("the concurrency-1 group should carry the slowing_down warning")
	}
}

// A rate sweep's phases share concurrency 0 and one input length but are
// not repeats of one configuration: a higher rate giving slower streams is
// the sweep's finding, not the server slowing down. The same records as
// TestSlowingDown (150 → 75 → 37.5 tok/s), at rates 1, 2 and 4.
func TestSlowingDownNotAcrossRates(t *testing.T) {
	var phases []trace.Phase
	for i, rate := range []float64{1, 2, 4} {
		p := phase(i, 0, 100, 7, 1)
		p.Kind, p.Rate = "rate", rate
		phases = append(phases, p)
	}
	h := header("rates", phases...)
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: slowingRecords()})
	if w := hasWarning(res.Warnings, WarnSlowingDown); w != nil {
		t.Errorf("slowing_down across rates: %+v", w)
	}
	if gs := res.Groups([]string{KeyRate}); len(gs) != 3 || gs[0].Keys[KeyRate] != 1.0 || gs[2].Keys[KeyRate] != 4.0 {
		t.Errorf("groups by rate: %d", len(gs))
	}
}

func TestTraceLevelWarnings(t *testing.T) {
	h := header("t", phase(0, 1, 100, 7, 0))
	h.Tokenizer = "/nonexistent/tokenizer.json"
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := a.Trace("", "x.trace.zst", h)
	r := okRecord("a", 0, 0)
	r.Usage = ""
	acc.Add(&r)
	acc.SetTruncated(true)
	// A second trace under the same label with another workload digest
	// mixes unlike runs in one cell.
	h2 := header("t", phase(0, 1, 100, 7, 0))
	h2.WorkloadDigest = "sha256:other"
	r2 := okRecord("b", 0, 0)
	a.Trace("", "y.trace.zst", h2).Add(&r2)
	res := a.Result()
	if hasWarning(res.Warnings, WarnTruncated) == nil || hasWarning(res.Warnings, WarnNoTokenizer) == nil {
		t.Fatalf("want truncated and tokenizer_unavailable, got %+v", res.Warnings)
	}
	g := res.Groups([]string{KeyConcurrency})[0]
	if hasWarning(g.Warnings, WarnMixedHeaders) == nil {
		t.Errorf("want mixed_headers, got %v", g.WarningCodes)
	}
	// Without a tokenizer or usage the count falls back to 5 chunks.
	if g.TokenSources[SourceChunks] != 1 {
		t.Errorf("sources %v, want one request counted by chunks", g.TokenSources)
	}
}

func TestSlowingDownWithinRun(t *testing.T) {
	// One closed-loop run of 15 sequential requests whose chunk spacing
	// doubles every five requests: per-stream 6/0.040 = 150, then 75, then
	// 37.5 tok/s. First third (5 requests) median 150, last third 37.5 <
	// 0.8·150; the U-test on 5 vs 5 fully separated (all tied within each
	// side: normal approximation with tie correction) gives p ≈ 0.004 < 0.05.
	h := header("loop", phase(0, 1, 100, 7, 0))
	var recs []trace.Record
	for i := 0; i < 15; i++ {
		step := []float64{10, 20, 40}[i/5]
		s := float64(i) * 1000
		r := okRecord(fmt.Sprint("r", i), 0, s)
		for j := range r.Chunks {
			r.Chunks[j].T = int64((s + 100 + float64(j)*step) * float64(msNs))
		}
		r.Done = r.Chunks[4].T + msNs
		recs = append(recs, r)
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	g := res.Groups([]string{KeyConcurrency})[0]
	w := hasWarning(g.Warnings, WarnSlowingDown)
	if w == nil {
		t.Fatalf("no slowing_down warning: %v", g.WarningCodes)
	}
	if w.Evidence["first_median_tps"] != 150.0 || w.Evidence["last_median_tps"] != 37.5 {
		t.Errorf("evidence %v", w.Evidence)
	}
	// A steady run of the same length does not warn.
	var steady []trace.Record
	for i := 0; i < 15; i++ {
		steady = append(steady, okRecord(fmt.Sprint("s", i), 0, float64(i)*1000))
	}
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: steady})
	if g := res.Groups(nil)[0]; hasWarning(g.Warnings, WarnSlowingDown) != nil {
		t.Errorf("steady run warned: %v", g.WarningCodes)
	}
}

func TestOneSlowRepeatIsNotATrend(t *testing.T) {
	// Six repeats at 150 tok/s except the last at 37.5: halves' medians are
	// 150 and 150, so no slowing_down (a noisy neighbour, not a decline).
	var phases []trace.Phase
	for i := 0; i < 6; i++ {
		phases = append(phases, phase(i, 1, 100, 7, i))
	}
	h := header("noisy", phases...)
	var recs []trace.Record
	for rep, step := range []float64{10, 10, 10, 10, 10, 40} {
		r := okRecord("r", rep, float64(rep)*1000)
		for i := range r.Chunks {
			r.Chunks[i].T = int64((float64(rep)*1000 + 100 + float64(i)*step) * float64(msNs))
		}
		r.Done = r.Chunks[4].T + msNs
		recs = append(recs, r)
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	if w := hasWarning(res.Warnings, WarnSlowingDown); w != nil {
		t.Errorf("one slow repeat warned: %+v", w)
	}
}

// thaiRecord streams five Thai words, one per chunk, as a model whose
// vocabulary has each as one token (Qwen3's, say) does: usage says 5 when
// honest. o200k counts the same chunks as 4+1+3+1+1 = 10 tokens, so
// judging usage with it would call an honest server 50% off. The text is
// 18+12+18+9+27 = 84 bytes.
func thaiRecord(id string, sentMs float64, usage, serverText int) trace.Record {
	r := okRecord(id, 0, sentMs)
	for i, w := range []string{"สวัสดี", "ครับ", "ขอบคุณ", "มาก", "ประเทศไทย"} {
		r.Chunks[i].Text = w
	}
	r.MaxTokens = 5
	r.Usage = fmt.Sprintf(`{"completion_tokens":%d}`, usage)
	r.ServerTextTokens = serverText
	return r
}

// countedRecord is okRecord with the server's usage count and its
// /tokenize count of the received text.
func countedRecord(usage, serverText int) trace.Record {
	r := okRecord("a", 0, 0)
	r.Usage = fmt.Sprintf(`{"completion_tokens":%d}`, usage)
	r.ServerTextTokens = serverText
	return r
}

// TestUsageJudgements holds usage against each reference in turn, with
// the arithmetic written out per case.
func TestUsageJudgements(t *testing.T) {
	cases := []struct {
		name   string
		opts   Options
		rec    trace.Record
		judged string  // the judgement counted in usage_checks
		warn   bool    // usage_mismatch expected
		diff   float64 // its max_relative_difference
		ref    int     // example_text_tokens (not for bounds)
	}{
		// The server's /tokenize counts the received Thai as 6 (one word is
		// two of its tokens): usage 6 agrees exactly. No warning, where
		// o200k (10) would have given one.
		{name: "Thai, honest, server tokenizer", rec: thaiRecord("a", 0, 6, 6), judged: JudgeServerTokenizer},
		// Usage 5 for the 5 events, one token each: the stream itself backs
		// the count, whatever a tokenizer makes of the text.
		{name: "Thai, one token per event", rec: thaiRecord("a", 0, 5, 0), judged: JudgeStream},
		// llama.cpp's case: usage 5 for 5 one-token events whose text its own
		// /tokenize re-counts as 9 (|5−9| = 4 > 3 and 4/9 > 2%, a warning
		// against the text): the stream backs the server, no warning.
		{name: "one token per event, the text re-counts higher", rec: countedRecord(5, 9),
			judged: JudgeStream},
		// The server's per-chunk counts 1+1+2+1+2 = 7 add up to its usage 7,
		// whatever its /tokenize says of the text (12).
		{name: "per-chunk counts add up to usage", rec: func() trace.Record {
			r := okRecord("a", 0, 0)
			for i, k := range []int{1, 1, 2, 1, 2} {
				r.Chunks[i].Tokens = k
			}
			r.ServerTextTokens = 12
			return r
		}(),
			judged: JudgeStream},
		// Usage 14 for 5 events without per-chunk counts: the stream does not
		// back it, and the server's own tokenizer (7) shows the fake:
		// |14−7|/14 = 0.5.
		{name: "a doubled count is not backed by the stream", rec: countedRecord(14, 7),
			judged: JudgeServerTokenizer, warn: true, diff: 0.5, ref: 7},
		// Usage 10 against the server's own 5: |10−5| = 5 > 3 tokens and
		// 5/10 = 0.5 > 2%.
		{name: "Thai, overstated, server tokenizer", rec: thaiRecord("a", 0, 10, 5), judged: JudgeServerTokenizer, warn: true, diff: 0.5, ref: 5},
		// Usage 8 against a text count of 7 (the server counts its EOS
		// token): |8−7| = 1 ≤ 3 tokens, within the allowance.
		{name: "EOS within the allowance", rec: countedRecord(8, 7),
			judged: JudgeServerTokenizer},
		// 200 vs 205: 5 tokens > 3 but 5/205 = 0.024 > 2%: flagged; the
		// chunks are the okRecord's, only the counts matter here.
		{name: "past both margins", rec: func() trace.Record {
			r := countedRecord(205, 200)
			r.MaxTokens = 205
			return r
		}(),
			judged: JudgeServerTokenizer, warn: true, diff: 0.024, ref: 200},
		// No server count, and o200k only the default: bounds. 5 chunks
		// ≤ 6 ≤ 84 bytes + 3: honest.
		{name: "Thai, honest, bounds", rec: thaiRecord("a", 0, 6, 0), judged: JudgeBounds},
		// Usage 100 > 84 + 3 = 87: (100−87)/100 = 0.13.
		{name: "Thai, overstated past a token per byte", rec: thaiRecord("a", 0, 100, 0), judged: JudgeBounds, warn: true, diff: 0.13},
		// Usage 3 for 5 content chunks: (5−3)/5 = 0.4 below the bound.
		{name: "fewer tokens than chunks", rec: thaiRecord("a", 0, 3, 0), judged: JudgeBounds, warn: true, diff: 0.4},
		// A server count that says unavailable (−1) is no count: bounds.
		{name: "server count unavailable", rec: thaiRecord("a", 0, 6, trace.TokenizeUnavailable), judged: JudgeBounds},
		// o200k given to the analysis is taken as the model's: the count-up
		// text is 1+1+2+1+2 = 7 tokens; usage 14: |14−7|/14 = 0.5.
		{name: "the model's tokenizer given", opts: Options{Tokenizer: "o200k_base"},
			rec:    func() trace.Record { r := okRecord("a", 0, 0); r.Usage = `{"completion_tokens":14}`; return r }(),
			judged: JudgeTokenizer, warn: true, diff: 0.5, ref: 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := header("u", phase(0, 1, 100, c.rec.MaxTokens, 0))
			res := analyzeTraces(t, c.opts, testTrace{h: h, records: []trace.Record{c.rec}})
			if got := res.Traces[0].UsageChecks; got[c.judged] != 1 || len(got) != 1 {
				t.Errorf("usage_checks %v, want {%s: 1}", got, c.judged)
			}
			w := hasWarning(res.Groups([]string{KeyConcurrency})[0].Warnings, WarnUsageMismatch)
			if (w != nil) != c.warn {
				t.Fatalf("usage_mismatch %v, want %v", w, c.warn)
			}
			if w == nil {
				return
			}
			if w.Evidence["judgement"] != c.judged || w.Evidence["max_relative_difference"] != c.diff {
				t.Errorf("evidence %v, want judgement %s, difference %v", w.Evidence, c.judged, c.diff)
			}
			if c.judged != JudgeBounds && w.Evidence["example_text_tokens"] != c.ref {
				t.Errorf("example_text_tokens %v, want %d", w.Evidence["example_text_tokens"], c.ref)
			}
			if !strings.Contains(w.Message, map[string]string{JudgeServerTokenizer: "its own tokenizer", JudgeTokenizer: "the model's tokenizer", JudgeBounds: "whatever the tokenizer"}[c.judged]) {
				t.Errorf("message does not say its judgement: %s", w.Message)
			}
		})
	}
}

// TestPromptNotExact: the server's /tokenize counts a 100-token prompt as
// 130 (another vocabulary): 30 > 2 tokens of allowance, 30/130 = 0.231.
// 102 (a BOS and an EOS added) is within it.
func TestPromptNotExact(t *testing.T) {
	for _, c := range []struct {
		server int
		warn   bool
	}{{130, true}, {102, false}, {98, false}, {0, false}, {trace.TokenizeUnavailable, false}} {
		r := okRecord("a", 0, 0)
		r.ServerPromptTokens = c.server
		res := analyzeTraces(t, Options{}, testTrace{h: header("p", phase(0, 1, 100, 7, 0)), records: []trace.Record{r, okRecord("b", 0, 200)}})
		w := hasWarning(res.Groups([]string{KeyConcurrency})[0].Warnings, WarnPromptNotExact)
		if (w != nil) != c.warn {
			t.Fatalf("server count %d: prompt_not_exact %v, want %v", c.server, w, c.warn)
		}
		if w != nil && (w.Evidence["example_workload_tokens"] != 100 || w.Evidence["example_server_tokens"] != 130 ||
			w.Evidence["max_relative_difference"] != 0.231 || w.Evidence["n_requests"] != 1 || w.Evidence["of_requests"] != 1) {
			t.Errorf("evidence %v", w.Evidence)
		}
	}
}

// TestServerTokenizerCountsOutput: without usage, the server's own count
// of the text is N. The Thai record's five words over 100–140 ms, no
// usage: with the server's count 5, per-stream = (5−1)/0.040 s = 100 tok/s;
// o200k (4+1+3+1+1 = 10) would have made it (10−1)/0.040 = 225 tok/s.
func TestServerTokenizerCountsOutput(t *testing.T) {
	for _, c := range []struct {
		server int
		tokens float64
		tps    float64
		source string
	}{{5, 5, 100, SourceServerTokenizer}, {0, 10, 225, SourceTokenizer}} {
		r := thaiRecord("a", 0, 0, c.server)
		r.Usage = ""
		res := analyzeTraces(t, Options{}, testTrace{h: header("n", phase(0, 1, 100, 5, 0)), records: []trace.Record{r}})
		g := res.Groups([]string{KeyConcurrency})[0]
		wantValues(t, g, map[string]float64{"output_tokens": c.tokens, "per_stream_tps": c.tps})
		if g.TokenSources[c.source] != 1 {
			t.Errorf("server count %d: sources %v, want %s", c.server, g.TokenSources, c.source)
		}
	}
}

// TestUsageJudgedByTheWorkloadsTokenizerJSON: a trace whose workload was
// built from a tokenizer.json (here Qwen3's, from the tokenizer tests) is
// judged by it: that vocabulary is the model's. The Thai words' usage is
// what Qwen3 makes of them, chunk by chunk; the same count plus a third is
// flagged, judged "tokenizer".
func TestUsageJudgedByTheWorkloadsTokenizerJSON(t *testing.T) {
	path, err := filepath.Abs("../workload/tokenize/testdata/qwen3/tokenizer.json.zst")
	if err != nil {
		t.Fatal(err)
	}
	qwen, err := tokenize.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r := thaiRecord("a", 0, 0, 0)
	k := 0
	for _, c := range r.Chunks {
		k += qwen.Count(c.Text)
	}
	for _, c := range []struct {
		usage int
		warn  bool
	}{{k, false}, {k + k/3 + 4, true}} {
		r.Usage = fmt.Sprintf(`{"completion_tokens":%d}`, c.usage)
		h := header("q", phase(0, 1, 100, 5, 0))
		h.Tokenizer, h.TokenizerPath = "hf:qwen3", path
		res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{r}})
		if got := res.Traces[0].UsageChecks; got[JudgeTokenizer] != 1 {
			t.Fatalf("usage_checks %v, want tokenizer 1 (Qwen3 counts the text %d)", got, k)
		}
		w := hasWarning(res.Groups([]string{KeyConcurrency})[0].Warnings, WarnUsageMismatch)
		if (w != nil) != c.warn {
			t.Errorf("usage %d against Qwen3's %d: usage_mismatch %v, want %v", c.usage, k, w, c.warn)
		}
		if w != nil && (w.Evidence["judgement"] != JudgeTokenizer || w.Evidence["example_text_tokens"] != k) {
			t.Errorf("evidence %v", w.Evidence)
		}
	}
}
