package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// handTrace is small enough to compute every metric by hand. o200k_base
// counts "1" and "," as one token each and " 2" as two.
//
// Phase 0 (concurrency 1), request r0: scheduled 0, sent 1 ms; chunks "1"
// at 101 ms, "," at 111 ms, " 2" at 131 ms; done 141 ms; usage says 4
// completion and 110 prompt tokens.
//
// Phase 1 (concurrency 2):
//
//	r1: scheduled = sent = 200 ms; chunks at 300, 320, 340 ms carrying
//	    server counts 1, 1, 2 (no usage) → 4 tokens from chunk counts;
//	    done 350 ms; workload input 100.
//	r2: scheduled 200, sent 202 ms (2 ms late); chunks at 402, 412, 422 ms
//	    without counts or usage → tokenizer 1+1+2 = 4; done 432 ms.
func handTrace() testTrace {
	h := header("A", phase(0, 1, 100, 4, 0), phase(1, 2, 100, 4, 0))
	return testTrace{label: "", h: h, records: []trace.Record{
		{ID: "r0", Phase: 0, InputTokens: 100, MaxTokens: 4, Scheduled: 0, Sent: 1 * msNs, Done: 141 * msNs, Status: 200,
			Chunks: []trace.Chunk{chunk(101, "1", 0), chunk(111, ",", 0), chunk(131, " 2", 0)},
			Usage:  `{"completion_tokens":4,"prompt_tokens":110}`, FinishReason: "length"},
		{ID: "r1", Phase: 1, InputTokens: 100, MaxTokens: 4, Scheduled: 200 * msNs, Sent: 200 * msNs, Done: 350 * msNs, Status: 200,
			Chunks: []trace.Chunk{chunk(300, "1", 1), chunk(320, ",", 1), chunk(340, " 2", 2)}, FinishReason: "length"},
		{ID: "r2", Phase: 1, InputTokens: 100, MaxTokens: 4, Scheduled: 200 * msNs, Sent: 202 * msNs, Done: 432 * msNs, Status: 200,
			Chunks: []trace.Chunk{chunk(402, "1", 0), chunk(412, ",", 0), chunk(422, " 2", 0)}, FinishReason: "length"},
	}}
}

func TestMetricsByHand(t *testing.T) {
	res := analyzeTraces(t, Options{}, handTrace())
	gs := res.Groups([]string{KeyConcurrency})
	c1 := findGroup(t, gs, map[string]any{KeyConcurrency: 1})
	// r0: ttft = 101−1 = 100 ms; ttft_sched = 101−0 = 101; e2e = 141−1 = 140;
	// tokens 4 (usage); per-stream = (4−1)/(0.131−0.101 s) = 100 tok/s;
	// tpot = (140−100)/(4−1) = 13.333 ms; itl per token: "," after 10 ms
	// (1 token) → 10; " 2" after 20 ms carrying 2 tokens → 10, 10;
	// itl per chunk: 10, 20 → median 15; prefill = 110 / 0.1 s = 1100;
	// lateness 1 ms; aggregate = 4 / (131−1 ms) = 30.769 tok/s;
	// total = (4+110)/0.130 = 876.923; requests/s = 1/(141−1 ms) = 7.142857;
	// goodput: ttft 100 ms ≤ 2 s and tpot 13.3 ms ≤ 50 ms → 7.142857.
	wantValues(t, c1, map[string]float64{
		"ttft": 100, "ttft_sched": 101, "e2e": 140, "output_tokens": 4,
		"per_stream_tps": 100, "tpot": 40.0 / 3, "itl": 10, "itl_mean": 10, "itl_chunk": 15,
		"prefill_tps": 1100, "lateness": 1, "aggregate_tps": 4 / 0.130, "total_tps": 114 / 0.130,
		"requests_per_s": 1 / 0.140, "goodput": 1 / 0.140, "requests_ok": 1, "requests_failed": 0, "speedup": 1,
	})
	// Usage 4 and text 1+1+2 = 4 agree; with usage inflated to 8 they would not.
	wantValues(t, c1, map[string]float64{"output_tokens_text": 4})
	if c1.TokenSources[SourceUsage] != 1 {
		t.Errorf("c1 sources = %v, want usage 1", c1.TokenSources)
	}
	c2 := findGroup(t, gs, map[string]any{KeyConcurrency: 2})
	// r1: ttft 100, e2e 150, per-stream 3/0.040 = 75, tpot 50/3, itl 20, 10, 10.
	// r2: ttft 200, e2e 230, per-stream 3/0.020 = 150, tpot 30/3 = 10, itl 10, 5, 5.
	// ttft {100, 200}: median 150, p90 = 100 + 0.9·100 = 190.
	// per-stream {75, 150}: median 112.5, min 75, max 150, p10 = 75 + 0.1·75 = 82.5.
	// itl {5,5,10,10,10,20}: median 10, mean 60/6 = 10, p90 at position
	// 0.9·5 = 4.5 → 10 + 0.5·(20−10) = 15.
	// lateness {0, 2}: p99 = 0.99·2 = 1.98 ms.
	// aggregate = 8 tokens / (422−200 ms) = 36.036; total = (8+200)/0.222;
	// requests/s = goodput = 2/(432−200 ms) = 8.6207; speedup = 36.036/30.769.
	wantValues(t, c2, map[string]float64{
		"ttft": 150, "ttft_p90": 190, "e2e": 190, "per_stream_tps": 112.5, "per_stream_tps_min": 75,
		"per_stream_tps_max": 150, "per_stream_tps_p10": 82.5, "tpot": (50.0/3 + 10) / 2,
		"itl": 10, "itl_mean": 10, "itl_p90": 15, "lateness_p99": 1.98,
		"aggregate_tps": 8 / 0.222, "total_tps": 208 / 0.222, "requests_per_s": 2 / 0.232, "goodput": 2 / 0.232,
		"speedup": (8 / 0.222) / (4 / 0.130), "output_tokens": 4,
	})
	if c2.TokenSources[SourceChunkTokens] != 1 || c2.TokenSources[SourceTokenizer] != 1 {
		t.Errorf("c2 sources = %v, want chunk-tokens 1 and tokenizer 1", c2.TokenSources)
	}
	// c2 is a burst: its send spread p99 of 1.98 ms is under the burst
	// limit max(1 ms, 5% of its TTFT p50 150 ms = 7.5 ms).
	if hasWarning(c2.Warnings, WarnClientBehind) != nil {
		t.Errorf("c2: a burst's 1.98 ms spread against a 150 ms TTFT should not warn, got %v", c2.WarningCodes)
	}
	if len(c1.Warnings) != 0 {
		t.Errorf("c1 should be clean, got %v", c1.WarningCodes)
	}
}

func TestDefinitionSets(t *testing.T) {
	// Phase 0 of handTrace, r0 (sent 1, text at 101, 111, 131, done 141 ms,
	// usage 4), read by each tool's definitions (the conformance tests
	// hold each set in detail):
	//   vllm: ends at its last chunk (131): e2e 130, tpot (130−100)/3 =
	//     10, per-stream 3/0.030 = 100; itl per chunk {10, 20} → median
	//     15; aggregate over the benchmark (first send to done): 4/0.140.
	//   sglang: ends at [DONE] (141): tpot 40/3, per-stream 3/0.040 = 75.
	//   aiperf: ends at its last content (131): itl = tpot = 30/3 = 10,
	//     1/itl = 100 tok/s; window over successful requests, send to
	//     last content: 4/0.130.
	//   guidellm: tpot = (131−101)/4 = 7.5; itl = 30/3 = 10; per-stream =
	//     4/0.140 s = 28.571; aggregate: tokens at 101 (1) and spread to
	//     141, the last (at the window's end) left out: 3/(0.141−0.001).
	//   seed: per-stream (4−1)/0.030 = 100; aggregate 4/0.140 = 28.571.
	cases := map[string]map[string]float64{
		"llmreplay": {"itl": 10, "tpot": 40.0 / 3, "per_stream_tps": 100, "aggregate_tps": 4 / 0.130},
		"vllm":      {"itl": 15, "tpot": 10, "per_stream_tps": 100, "aggregate_tps": 4 / 0.140},
		"sglang":    {"itl": 15, "tpot": 40.0 / 3, "per_stream_tps": 75, "aggregate_tps": 4 / 0.140},
		"aiperf":    {"itl": 10, "tpot": 10, "per_stream_tps": 100, "aggregate_tps": 4 / 0.130},
		"guidellm":  {"itl": 10, "tpot": 7.5, "per_stream_tps": 4 / 0.140, "aggregate_tps": 3 / 0.140},
		"seed":      {"itl": 10, "tpot": 40.0 / 3, "per_stream_tps": 100, "aggregate_tps": 4 / 0.140},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			res := analyzeTraces(t, Options{Definitions: name}, handTrace())
			g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
			wantValues(t, g, want)
			if res.Definitions.Source == "" {
				t.Error("every definition set names its source")
			}
		})
	}
	if _, err := New(Options{Definitions: "nope"}); err == nil || !strings.Contains(err.Error(), "llmreplay") {
		t.Errorf("unknown set: err = %v, want the list of sets", err)
	}
}

func TestAIPerfCountsWithTokenizer(t *testing.T) {
	// Usage claims 8 tokens, the text is 4 tokens: AIPerf's client-side
	// count gives tpot = (130−100)/(4−1) (its request ends at the last
	// content, 131 ms); llmreplay trusts usage: (140−100)/(8−1).
	tt := handTrace()
	tt.records = tt.records[:1]
	tt.records[0].Usage = `{"completion_tokens":8}`
	for name, want := range map[string]float64{"aiperf": 10, "llmreplay": 40.0 / 7} {
		res := analyzeTraces(t, Options{Definitions: name}, tt)
		g := res.Groups(nil)[0]
		wantValues(t, g, map[string]float64{"tpot": want})
	}
}

func TestSLO(t *testing.T) {
	// With ttft ≤ 150 ms only r0 (100) and r1 (100) are good, not r2 (200):
	// c2 goodput = 1/(432−200 ms).
	slo, err := ParseSLO("ttft=150ms,tpot=50")
	if err != nil {
		t.Fatal(err)
	}
	res := analyzeTraces(t, Options{SLO: slo}, handTrace())
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 2})
	wantValues(t, g, map[string]float64{"goodput": 1 / 0.232})
	for _, bad := range []string{"", "ttft", "ttft=abc", "foo=1s", "ttft=-1s"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) should fail", bad)
		}
	}
}

func TestFailedRequests(t *testing.T) {
	// A failed request counts in requests_failed by class and nowhere else;
	// its lateness still counts (the client sent it).
	tt := handTrace()
	tt.records = append(tt.records, trace.Record{ID: "r3", Phase: 0, Scheduled: 0, Sent: 3 * msNs, Done: 5 * msNs,
		Status: 503, Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "503"}})
	res := analyzeTraces(t, Options{}, tt)
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
	// lateness {1, 3} → median 2; ttft still only r0.
	wantValues(t, g, map[string]float64{"requests_ok": 1, "requests_failed": 1, "ttft": 100, "lateness": 2})
	if g.FailedByClass["http-status"] != 1 {
		t.Errorf("failed by class = %v", g.FailedByClass)
	}
}

func TestWarmupSkipped(t *testing.T) {
	tt := handTrace()
	w := tt.records[0]
	w.Warmup = true
	w.ID = "warm"
	tt.records = append([]trace.Record{w}, tt.records...)
	res := analyzeTraces(t, Options{}, tt)
	if res.Traces[0].Warmup != 1 || res.Traces[0].Records != 4 {
		t.Errorf("trace info = %+v", res.Traces[0])
	}
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
	wantValues(t, g, map[string]float64{"requests_ok": 1})
}

func TestLookupMetric(t *testing.T) {
	for _, ok := range []string{"ttft", "ttft_p99", "per_stream_tps_min", "aggregate_tps", "aggregate_tps_max", "speedup", "requests_failed", "itl_p50", "ttft_sched_p90",
		"ttft_p95", "itl_p75", "e2e_p99.9", "tpot_p1", "ttft_p0.5", "output_tokens_p99.99"} {
		if _, _, err := LookupMetric(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"speedup_p50", "requests_ok_mean", "nope", "", "aggregate_tps_p95", "ttft_p0", "ttft_p100", "ttft_p05", "ttft_p99.90",
		"ttft_p9.", "ttft_p.5", "ttft_p", "ttft_pabc", "ttft_p1e1", "ttft_p-5"} {
		if _, _, err := LookupMetric(bad); err == nil {
			t.Errorf("%s should not be a metric", bad)
		}
	}
	for _, m := range Metrics {
		if m.Doc == "" || m.Unit == "" {
			t.Errorf("%s lacks a definition or unit", m.Name)
		}
	}
}

// The same 1.98 ms lateness in an open-loop phase is the client falling
// behind its schedule: the 1 ms limit applies as it is.
func TestClientBehindOpenLoop(t *testing.T) {
	tt := handTrace()
	tt.h.Phases[1].Kind = "rate"
	res := analyzeTraces(t, Options{}, tt)
	c2 := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 2})
	w := hasWarning(c2.Warnings, WarnClientBehind)
	if w == nil {
		t.Fatalf("open loop: lateness p99 1.98 ms should warn client_behind, got %v", c2.WarningCodes)
	}
	// A burst whose spread is over 5% of its TTFT warns too: r2 sent 10 ms
	// late against TTFTs of 100 and 200 ms (p50 150 → limit 7.5 ms).
	tt = handTrace()
	tt.records[2].Sent = 210 * msNs
	res = analyzeTraces(t, Options{}, tt)
	c2 = findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 2})
	if hasWarning(c2.Warnings, WarnClientBehind) == nil {
		t.Errorf("burst: a 9.9 ms spread against a 7.5 ms limit should warn, got %v", c2.WarningCodes)
	}
}

// TestSLOString: String writes what ParseSLO reads, so the CLI's --slo
// default (DefaultSLO.String()) is DefaultSLO itself, not a second copy.
func TestSLOString(t *testing.T) {
	for _, tc := range []struct {
		slo  SLO
		want string
	}{
		{DefaultSLO, "ttft=2s,tpot=50ms"},
		{SLO{TTFT: 150 * time.Millisecond, E2E: 10 * time.Second}, "ttft=150ms,e2e=10s"},
		{SLO{TPOT: 1500 * time.Microsecond}, "tpot=1.5ms"},
	} {
		if got := tc.slo.String(); got != tc.want {
			t.Errorf("%+v: String() = %q, want %q", tc.slo, got, tc.want)
		}
		back, err := ParseSLO(tc.slo.String())
		if err != nil || back != tc.slo {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", tc.slo.String(), back, err, tc.slo)
		}
	}
}
