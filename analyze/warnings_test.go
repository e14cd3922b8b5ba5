package analyze

import (
	"fmt"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
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
			// Usage says 14 while the text holds 7 tokens: |14−7|/14 = 50% > 2%.
			name: "usage mismatch", code: WarnUsageMismatch,
			modify: func(r *trace.Record) { r.Usage = `{"completion_tokens":14}` },
			check: func(t *testing.T, w *Warning) {
				if w.Evidence["example_server_tokens"] != 14 || w.Evidence["example_text_tokens"] != 7 || w.Evidence["max_relative_difference"] != 0.5 {
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

func TestSlowingDown(t *testing.T) {
	// Three repeats at concurrency 1; per-stream (7−1)/(last−first): the
	// chunk spacing grows 10 → 20 → 40 ms, so 6/0.040 = 150, 6/0.080 = 75,
	// 6/0.160 = 37.5 tok/s: the last is 25% of the first (< 80%).
	h := header("slow", phase(0, 1, 100, 7, 0), phase(1, 1, 100, 7, 1), phase(2, 1, 100, 7, 2))
	var recs []trace.Record
	for rep, step := range []float64{10, 20, 40} {
		r := okRecord("r", rep, float64(rep)*1000)
		for i := range r.Chunks {
			r.Chunks[i].T = int64((float64(rep)*1000 + 100 + float64(i)*step) * float64(msNs))
		}
		r.Done = r.Chunks[4].T + msNs
		recs = append(recs, r)
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
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
	var recs []trace.Record
	for ph, step := range []float64{10, 20, 40} {
		r := okRecord("r", ph, float64(ph)*1000)
		for i := range r.Chunks {
			r.Chunks[i].T = int64((float64(ph)*1000 + 100 + float64(i)*step) * float64(msNs))
		}
		r.Done = r.Chunks[4].T + msNs
		recs = append(recs, r)
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
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
