package analyze

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
)

// vllmScrape is a vLLM /metrics scrape at tMs milliseconds.
func vllmScrape(tMs float64, running, waiting, kv, preempt, queries, hits float64) trace.Scrape {
	l := `engine="0",model_name="m1"`
	return trace.Scrape{T: int64(tMs * float64(msNs)), Duration: msNs, Source: trace.SourceMetrics, Target: "http://127.0.0.1:8000/metrics",
		Samples: []trace.Sample{
			{Name: "vllm:num_requests_running", Labels: l, Value: running},
			{Name: "vllm:num_requests_waiting", Labels: l, Value: waiting},
			{Name: "vllm:kv_cache_usage_perc", Labels: l, Value: kv},
			{Name: "vllm:num_preemptions_total", Labels: l, Value: preempt},
			{Name: "vllm:prefix_cache_queries_total", Labels: l, Value: queries},
			{Name: "vllm:prefix_cache_hits_total", Labels: l, Value: hits},
			{Name: "vllm:unrelated_total", Value: 99},
		}}
}

// TestServerState works the server-state metrics out by hand on a trace
// written to a file and read back, scrapes between the records.
//
// Phase 0 (concurrency 1): one request sent at 0, done at 150 ms.
// Phase 1 (concurrency 4): four requests sent at 1,000 ms, done at 1,150.
// Scrapes (ms: running, waiting, kv, preemptions, prefix queries, hits):
//
//	 −50: 0 0 0.10 5 1000 100
//	  50: 1 0 0.20 5 1100 100
//	 100: 1 0 0.30 5 1100 100
//	 200: 0 0 0.10 5 1200 150
//	 500: failed (HTTP 503)
//	1050: 2 2 0.99 7 1600 150
//	1100: 2 1 1.00 1 2000 550   (the server restarted: preemptions 7 → 1)
//	1300: 0 0 0.05 1 2000 550
//
// Phase 0: scrapes inside [0, 150] are 50 and 100: running peak 1, mean
// (1+1)/2 = 1; waiting 0, 0; kv peak 0.3, mean (0.2+0.3)/2 = 0.25.
// Counters from the last scrape at or before 0 (−50) to the first at or
// after 150 (200): preemptions 5 → 5 = 0; prefix (150−100)/(1200−1000) =
// 50/200 = 0.25.
// Phase 1: inside [1000, 1150] are 1050 and 1100: running 2, mean 2;
// waiting peak 2, mean (2+1)/2 = 1.5; kv peak 1.0, mean (0.99+1)/2 =
// 0.995. Counters from 200 to 1300: preemptions (7−5) + 1 (restart: the
// new reading is all growth) + (1−1) = 3; prefix hits 0 + 400 + 0 = 400 of
// queries 400 + 400 + 0 = 800: 0.5. So phase 1 warns queueing (2 slots),
// preempted (3) and kv_cache_full (1.0 ≥ 0.98); phase 0 none of them.
func TestServerState(t *testing.T) {
	h := header("vllm", phase(0, 1, 100, 7, 0), phase(1, 4, 100, 7, 0))
	path := filepath.Join(t.TempDir(), "state.trace.zst")
	w, err := trace.Create(path, h, trace.WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	write := func(s trace.Scrape) {
		if err := w.WriteScrape(&s); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(r trace.Record) {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	write(vllmScrape(-50, 0, 0, 0.10, 5, 1000, 100))
	write(vllmScrape(50, 1, 0, 0.20, 5, 1100, 100))
	write(vllmScrape(100, 1, 0, 0.30, 5, 1100, 100))
	rec(okRecord("a", 0, 0))
	write(vllmScrape(200, 0, 0, 0.10, 5, 1200, 150))
	write(trace.Scrape{T: 500 * msNs, Source: trace.SourceMetrics, Target: "x", Error: "HTTP 503 Service Unavailable"})
	write(vllmScrape(1050, 2, 2, 0.99, 7, 1600, 150))
	write(vllmScrape(1100, 2, 1, 1.00, 1, 2000, 550))
	for _, id := range []string{"b", "c", "d", "e"} {
		rec(okRecord(id, 1, 1000))
	}
	write(vllmScrape(1300, 0, 0, 0.05, 1, 2000, 550))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := AnalyzeFiles(Options{}, Input{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	info := res.Traces[0]
	if info.Scrapes != 8 || info.ScrapesFailed != 1 || info.ScrapeError != "HTTP 503 Service Unavailable" || info.ServerEngine != "vllm" {
		t.Errorf("trace info: %d scrapes, %d failed (%q), engine %q", info.Scrapes, info.ScrapesFailed, info.ScrapeError, info.ServerEngine)
	}
	gs := res.Groups([]string{KeyConcurrency})
	g0 := findGroup(t, gs, map[string]any{KeyConcurrency: 1})
	wantValues(t, g0, map[string]float64{
		"server_running_peak": 1, "server_running_avg": 1,
		"server_waiting_peak": 0, "server_waiting_avg": 0,
		"server_kv_usage_peak": 0.3, "server_kv_usage_avg": 0.25,
		"server_preemptions": 0, "server_prefix_hit_rate": 0.25,
	})
	for _, code := range []string{WarnQueueing, WarnPreempted, WarnKVCacheFull} {
		if w := hasWarning(g0.Warnings, code); w != nil {
			t.Errorf("concurrency 1 warns %s: %s", code, w.Message)
		}
	}
	g1 := findGroup(t, gs, map[string]any{KeyConcurrency: 4})
	wantValues(t, g1, map[string]float64{
		"server_running_peak": 2, "server_running_avg": 2,
		"server_waiting_peak": 2, "server_waiting_avg": 1.5,
		"server_kv_usage_peak": 1, "server_kv_usage_avg": 0.995,
		"server_preemptions": 3, "server_prefix_hit_rate": 0.5,
		"server_waiting_peak_max": 2, "server_running_peak_max": 2,
	})
	q := hasWarning(g1.Warnings, WarnQueueing)
	if q == nil || !strings.Contains(q.Message, "2 slots") || q.Evidence["slots"] != 2.0 {
		t.Errorf("queueing warning %+v", q)
	}
	if p := hasWarning(g1.Warnings, WarnPreempted); p == nil || p.Evidence["preemptions_max"] != 3.0 {
		t.Errorf("preempted warning %+v", p)
	}
	if k := hasWarning(g1.Warnings, WarnKVCacheFull); k == nil || !strings.Contains(k.Message, "100%") {
		t.Errorf("kv_cache_full warning %+v", k)
	}
}

// TestServerStateAbsent: a trace without scrapes (every trace before 1.3)
// has no server-state values and no server-state warnings, and the
// metrics a run without a scrape inside its window cannot have are left
// out rather than made 0.
func TestServerStateAbsent(t *testing.T) {
	h := header("old", phase(0, 4, 100, 7, 0))
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{okRecord("a", 0, 0), okRecord("b", 0, 0)}})
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 4})
	for _, m := range stateMetrics {
		if v := g.Values[m.Name]; v.Valid() || v.N != 0 {
			t.Errorf("%s = %v from no scrape", m.Name, v)
		}
	}
	for _, code := range []string{WarnQueueing, WarnPreempted, WarnKVCacheFull} {
		if hasWarning(g.Warnings, code) != nil {
			t.Errorf("warned %s without scrapes", code)
		}
	}
}

// procScrape is a --watch-pid sample at tMs: the tree's RSS (bytes), CPU
// seconds and GPU memory (bytes, two GPUs of half each).
func procScrape(tMs, rss, cpu, gpu float64) trace.Scrape {
	return trace.Scrape{T: int64(tMs * float64(msNs)), Source: trace.SourceProcess, Target: "pid 42 (llama-server)",
		Samples: []trace.Sample{
			{Name: "process_resident_memory_bytes", Value: rss / 2},
			{Name: "process_tree_resident_memory_bytes", Value: rss},
			{Name: "process_tree_cpu_seconds_total", Value: cpu},
			{Name: "gpu_memory_used_bytes", Labels: `gpu="0"`, Value: gpu / 2},
			{Name: "gpu_memory_used_bytes", Labels: `gpu="1"`, Value: gpu / 2},
		}}
}

// TestProcessState works --watch-pid's metrics out by hand. One request
// from 0 to 150 ms; samples (ms: tree RSS, CPU s, GPU bytes):
//
//	−100: 500e6, 10.0, 1e9
//	  50: 700e6, 10.1, 3e9
//	 100: 650e6, 10.2, 3e9
//	 250: 400e6, 10.35, 1e9
//
// Inside [0, 150]: 50 and 100: RSS peak 700e6 → 700 MB (the tree's, not
// the process's own 350 MB); GPU peak 3e9 summed over both GPUs → 3,000
// MB. CPU from −100 to 250 ms: (10.35 − 10.0) s / 0.35 s = 1 core. A
// /metrics scrape's own process_resident_memory_bytes is the HTTP front
// end's and is not read as the server's memory.
func TestProcessState(t *testing.T) {
	rec := okRecord("a", 0, 0)
	res := analyzeWithScrapes(t, header("llama", phase(0, 1, 100, 7, 0)), []trace.Record{rec}, []trace.Scrape{
		procScrape(-100, 500e6, 10.0, 1e9), procScrape(50, 700e6, 10.1, 3e9), procScrape(100, 650e6, 10.2, 3e9), procScrape(250, 400e6, 10.35, 1e9),
		{T: 60 * msNs, Source: trace.SourceMetrics, Samples: []trace.Sample{{Name: "process_resident_memory_bytes", Value: 9e9}}},
	})
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
	wantValues(t, g, map[string]float64{"process_rss_peak": 700, "process_cpu_cores": 1, "gpu_memory_peak": 3000})
}

// analyzeWithScrapes analyses records and scrapes of one trace.
func analyzeWithScrapes(t *testing.T, h trace.Header, recs []trace.Record, scrapes []trace.Scrape) *Result {
	t.Helper()
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := a.Trace("", "", h)
	tracetest.AddAll(acc, recs)
	for i := range scrapes {
		acc.AddScrape(&scrapes[i])
	}
	return a.Result()
}

// ttftScrape is a vLLM scrape at tMs holding only its TTFT histogram:
// cumulative counts at le 0.02 s, 0.1 s and +Inf.
func ttftScrape(tMs, le20ms, le100ms, inf float64) trace.Scrape {
	b := "vllm:time_to_first_token_seconds_bucket"
	return trace.Scrape{T: int64(tMs * float64(msNs)), Source: trace.SourceMetrics, Samples: []trace.Sample{
		{Name: b, Labels: `le="0.02",model_name="m1"`, Value: le20ms},
		{Name: b, Labels: `le="0.1",model_name="m1"`, Value: le100ms},
		{Name: b, Labels: `le="+Inf",model_name="m1"`, Value: inf},
		{Name: "vllm:time_to_first_token_seconds_count", Labels: `model_name="m1"`, Value: inf},
	}}
}

// TestServerTTFT works server_ttft_p50 and server_ttft_differs out by
// hand. Every request is okRecord: client TTFT 100 ms.
//
// Concurrency 1 (one request, 0–150 ms): the histogram from −50 ms (0, 0,
// 0) to 200 ms (0, 1, 1) counted one first token in (20, 100] ms: median
// rank 0.5 of 1 → 20 + 0.5 × (100 − 20) = 60 ms. The client's 100 ms is
// within the bucket's upper bound + max(50, 25% of 100) = 150: agreed.
// Concurrency 4 (four requests, 1,000–1,150 ms): from 200 ms (0, 1, 1)
// to 1,300 ms (4, 5, 5) it counted 4 first tokens, all ≤ 20 ms: median
// rank 2 of 4 in (0, 20] → 0 + 2/4 × 20 = 10 ms. The client's 100 ms is
// above 20 + 50 = 70: server_ttft_differs, clients above.
func TestServerTTFT(t *testing.T) {
	h := header("vllm", phase(0, 1, 100, 7, 0), phase(1, 4, 100, 7, 0))
	recs := []trace.Record{okRecord("a", 0, 0), okRecord("b", 1, 1000), okRecord("c", 1, 1000), okRecord("d", 1, 1000), okRecord("e", 1, 1000)}
	res := analyzeWithScrapes(t, h, recs, []trace.Scrape{
		ttftScrape(-50, 0, 0, 0), ttftScrape(200, 0, 1, 1), ttftScrape(1300, 4, 5, 5),
	})
	gs := res.Groups([]string{KeyConcurrency})
	g1 := findGroup(t, gs, map[string]any{KeyConcurrency: 1})
	wantValues(t, g1, map[string]float64{"server_ttft_p50": 60, "ttft": 100})
	if w := hasWarning(g1.Warnings, WarnServerTTFT); w != nil {
		t.Errorf("concurrency 1 warned: %s", w.Message)
	}
	g4 := findGroup(t, gs, map[string]any{KeyConcurrency: 4})
	wantValues(t, g4, map[string]float64{"server_ttft_p50": 10, "ttft": 100})
	w := hasWarning(g4.Warnings, WarnServerTTFT)
	if w == nil || w.Evidence["client_above"] != true || w.Evidence["server_bucket_hi_ms"] != 20.0 || !strings.Contains(w.Message, "clients waited 100 ms") {
		t.Errorf("concurrency 4: warning %+v", w)
	}
}

// TestServerTTFTNeedsItsOwnScrapes: server_ttft_differs compares a run's
// client TTFT with the server's histogram only when the scrapes it was
// read between hold the run's first tokens and nobody else's. Every
// request is okRecord (client TTFT 100 ms); every histogram increase puts
// its first tokens ≤ 20 ms (median 10), which would warn (100 > 20 + 50).
//
//   - two one-request phases sent at 0 and 300 ms, scrapes at −50 and
//     1,000 ms only (runs shorter than the scrape interval): each run's
//     bracket [−50, 1000] holds the other's first token (at 100 and 400):
//     neither is judged;
//   - a warm-up's first token (100) inside the measured request's bracket:
//     not judged;
//   - no scrape at or before the first send (300; scrapes at 350 and
//     1,000): not judged; with one at 250 instead the bracket is the
//     run's own (one first token, counted once): judged, and it warns.
func TestServerTTFTNeedsItsOwnScrapes(t *testing.T) {
	h := header("s", phase(0, 1, 100, 7, 0), phase(1, 1, 100, 7, 0))
	warns := func(recs []trace.Record, scrapes ...trace.Scrape) []bool {
		res := analyzeWithScrapes(t, h, recs, scrapes)
		var out []bool
		for _, g := range res.Groups([]string{KeyPhase}) {
			out = append(out, hasWarning(g.Warnings, WarnServerTTFT) != nil)
		}
		return out
	}
	if w := warns([]trace.Record{okRecord("a", 0, 0), okRecord("b", 1, 300)}, ttftScrape(-50, 0, 0, 0), ttftScrape(1000, 2, 2, 2)); w[0] || w[1] {
		t.Errorf("runs sharing one scrape interval warned: %v", w)
	}
	warm := okRecord("w", 1, 0)
	warm.Warmup = true
	if w := warns([]trace.Record{warm, okRecord("b", 1, 300)}, ttftScrape(-50, 0, 0, 0), ttftScrape(1000, 2, 2, 2)); w[0] {
		t.Error("a warm-up's first token inside the bracket: warned")
	}
	if w := warns([]trace.Record{okRecord("b", 1, 300)}, ttftScrape(350, 0, 0, 0), ttftScrape(1000, 1, 1, 1)); w[0] {
		t.Error("no scrape before the first send: warned")
	}
	if w := warns([]trace.Record{okRecord("b", 1, 300)}, ttftScrape(250, 0, 0, 0), ttftScrape(1000, 1, 1, 1)); !w[0] {
		t.Error("the run's own bracket: not judged")
	}
}
