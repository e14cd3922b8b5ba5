package analyze

import (
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestServerTimers works the server-timer metrics out by hand. Every
// request is okRecord: 7 tokens (usage), content chunks from 100 to 140 ms,
// so per_stream_tps = (7 − 1) / 0.040 s = 150 tok/s.
//
//	A llama.cpp timings: predicted 7 in 28 ms → decode 250; prompt 100 in 50 ms → prefill 2,000; cache_n 64
//	B Ollama: eval 7 in 35 ms → 200; prompt_eval 100 in 100 ms → 1,000; usage cached_tokens 32
//	D llama.cpp: predicted 7 in 20 ms → 350; prompt 100 in 25 ms → 4,000; tokens_cached 16
//	C hostile: predicted 7 in 1e-7 ms (7e10 tok/s, past the 1e7 bound) and
//	  cached_tokens −5: no sample at all
//
// Medians of three: decode 250, prefill 2,000, cached 32. serving_overhead
// per request: A 1 − 150/250 = 0.4, B 1 − 150/200 = 0.25, D 1 − 150/350 =
// 0.571…; median 0.4 > 0.2: server_claims_faster.
func TestServerTimers(t *testing.T) {
	a, b, c, d := okRecord("a", 0, 0), okRecord("b", 0, 200), okRecord("c", 0, 400), okRecord("d", 0, 600)
	a.Timings = `{"predicted_n":7,"predicted_ms":28,"prompt_n":100,"prompt_ms":50,"cache_n":64}`
	b.Usage = `{"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":32}}`
	b.Timings = `{"eval_count":7,"eval_duration":35000000,"prompt_eval_count":100,"prompt_eval_duration":100000000}`
	c.Usage = `{"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":-5}}`
	c.Timings = `{"predicted_n":7,"predicted_ms":0.0000001}`
	d.Timings = `{"predicted_n":7,"predicted_ms":20,"prompt_n":100,"prompt_ms":25,"tokens_cached":16}`
	h := header("srv", phase(0, 4, 100, 7, 0))
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{a, b, c, d}})
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 4})
	wantValues(t, g, map[string]float64{
		"per_stream_tps":       150,
		"server_decode_tps":    250,
		"server_prefill_tps":   2000,
		"server_cached_tokens": 32,
		"serving_overhead":     0.4,
	})
	if n := g.Values["server_decode_tps"].N; n != 3 {
		t.Errorf("server_decode_tps from %d requests, want 3 (the implausible one dropped)", n)
	}
	w := hasWarning(g.Warnings, WarnServerClaimsFaster)
	if w == nil || !strings.Contains(w.Message, "250 tok/s") || !strings.Contains(w.Message, "40% less") {
		t.Errorf("server_claims_faster: %+v", w)
	}
	// A server whose timer agrees with its stream does not warn: predicted
	// 7 in 46.7 ms is 150 tok/s, overhead 0.
	for _, r := range []*trace.Record{&a, &b, &c, &d} {
		r.Usage, r.Timings = `{"completion_tokens":7}`, `{"predicted_n":7,"predicted_ms":46.666666667}`
	}
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{a, b, c, d}})
	g = findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 4})
	if w := hasWarning(g.Warnings, WarnServerClaimsFaster); w != nil || g.Values["serving_overhead"].Value > 1e-6 {
		t.Errorf("agreeing timer: overhead %v, warning %+v", g.Values["serving_overhead"].Value, w)
	}
}
