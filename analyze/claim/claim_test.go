package claim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

func TestParseClaim(t *testing.T) {
	cases := []struct {
		in     string
		metric string
		sel    map[string]string
		op     string
		bound  float64
	}{
		{"per_stream_tps{concurrency=1} >= 490", "per_stream_tps", map[string]string{"concurrency": "1"}, ">=", 490},
		{"aggregate_tps{concurrency=32} >= 5,600 tok/s # seeds: 5,647", "aggregate_tps", map[string]string{"concurrency": "32"}, ">=", 5600},
		{"ttft_p50{concurrency=32, label=\"vLLM bf16\"} < 0.3s", "ttft_p50", map[string]string{"concurrency": "32", "label": "vLLM bf16"}, "<", 300},
		{"ttft_p99 <= 2600", "ttft_p99", map[string]string{}, "<=", 2600},
		{"tpot{input-tokens=800} < 50ms", "tpot", map[string]string{"input_tokens": "800"}, "<", 50},
		{"itl_p99 < 1.5e3us", "itl_p99", map[string]string{}, "<", 1.5},
		{"requests_failed{concurrency=8} == 0", "requests_failed", map[string]string{"concurrency": "8"}, "==", 0},
		{"speedup{concurrency=2} > 2.17x", "speedup", map[string]string{"concurrency": "2"}, ">", 2.17},
		{"e2e_max < 1m", "e2e_max", map[string]string{}, "<", 60000},
		{"ttft_p95{concurrency=4} < 2s", "ttft_p95", map[string]string{"concurrency": "4"}, "<", 2000},
		{"e2e_p99.9<=5s", "e2e_p99.9", map[string]string{}, "<=", 5000},
	}
	for _, c := range cases {
		got, err := ParseClaim(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got.Metric != c.metric || got.Op != c.op || !near(got.Bound, c.bound) || fmt.Sprint(got.Selector) != fmt.Sprint(c.sel) {
			t.Errorf("%q: got %+v", c.in, got)
		}
	}
	bad := []string{
		"", "# only a comment", "per_stream_tps", "per_stream_tps >=", "per_stream_tps >= abc",
		"nope >= 1", "ttft_p100 < 1", "aggregate_tps_p95 >= 1", "ttft_p05 < 1", "per_stream_tps{concurrency=1 >= 4", "per_stream_tps{foo=1} >= 4",
		"per_stream_tps{concurrency=x} >= 4", "ttft < 3 tok/s", "per_stream_tps >= 3ms", "per_stream_tps{concurrency=1,concurrency=2} >= 1",
		"per_stream_tps => 4", "per_stream_tps{label=} >= 1",
	}
	for _, b := range bad {
		if _, err := ParseClaim(b); err == nil {
			t.Errorf("%q should not parse", b)
		}
	}
}

func TestParseClaimsFile(t *testing.T) {
	in := "# published\n\nper_stream_tps{concurrency=1} >= 490  # single stream\nbogus line\n"
	_, err := ParseClaims(strings.NewReader(in))
	if err == nil || !strings.HasPrefix(err.Error(), "line 4:") {
		t.Fatalf("err = %v, want one naming line 4", err)
	}
	cs, err := ParseClaims(strings.NewReader(in[:strings.Index(in, "bogus")]))
	if err != nil || len(cs) != 1 || cs[0].Line != 3 {
		t.Fatalf("claims %+v err %v", cs, err)
	}
}

// claimTrace has ten single requests at concurrency 1 whose per-stream
// speeds are exactly 1, 2, …, 10 tok/s: request i has usage i+1 tokens
// and one second between its first and last chunk, (i+1−1)/1 s = i.
// The median is 5.5 and its 95% interval is [x(2), x(9)] = [2, 9]
// (TestOrderCI works the ranks out).
func claimTrace() testTrace {
	h := header("c", phase(0, 1, 100, 0, 0))
	h.Reference = ""
	var recs []trace.Record
	for i := 1; i <= 10; i++ {
		s := float64(i) * 10000
		recs = append(recs, trace.Record{ID: fmt.Sprint(i), Phase: 0, InputTokens: 100, Scheduled: int64(s * float64(msNs)), Sent: int64(s * float64(msNs)),
			Done: int64((s + 1200) * float64(msNs)), Status: 200,
			Chunks: []trace.Chunk{chunk(s+100, "1", 0), chunk(s+1100, ",", 0)}, Usage: fmt.Sprintf(`{"completion_tokens":%d}`, i+1)})
	}
	return testTrace{h: h, records: recs}
}

func TestCheckVerdicts(t *testing.T) {
	res := analyzeTraces(t, analyze.Options{}, claimTrace())
	cases := []struct {
		claim   string
		verdict string
	}{
		{"per_stream_tps{concurrency=1} >= 1.5", Holds},      // lo 2 ≥ 1.5
		{"per_stream_tps{concurrency=1} >= 5", Inconclusive}, // [2, 9] straddles 5
		{"per_stream_tps{concurrency=1} >= 10", DoesNotHold}, // hi 9 < 10
		{"per_stream_tps{concurrency=1} < 9.5", Holds},       // hi 9 < 9.5
		{"per_stream_tps_max{concurrency=1} == 10", Holds},   // exact max
		{"per_stream_tps_min >= 2", DoesNotHold},             // min is 1
		{"requests_ok{concurrency=1} == 10", Holds},          // count
		{"requests_failed == 0", Holds},                      // count
		{"per_stream_tps{concurrency=4} >= 1", Inconclusive}, // nothing matches
		{"ttft_p99 < 10s", Inconclusive},                     // p99 of 10 samples has no upper bound
		{"ttft < 1s", Holds},                                 // every ttft is 100 ms: [100, 100]
		{"aggregate_tps{concurrency=1} >= 1", Inconclusive},  // one run: one sample
		{"per_stream_tps{label=c,repeat=0} > 1", Holds},      // lo 2 > 1
		{"per_stream_tps{label=other} > 1", Inconclusive},    // no such label
	}
	for _, c := range cases {
		cl, err := ParseClaim(c.claim)
		if err != nil {
			t.Fatal(err)
		}
		v := Check(res, cl, CheckOptions{})
		if v.Verdict != c.verdict {
			t.Errorf("%s: %s (%s; measured %v [%v, %v] n=%d), want %s", c.claim, v.Verdict, v.Reason, v.Measured, v.Lo, v.Hi, v.N, c.verdict)
		}
	}
	cl, _ := ParseClaim("per_stream_tps >= 1")
	v := Check(res, cl, CheckOptions{})
	if v.Measured != 5.5 || v.Lo != 2 || v.Hi != 9 || v.N != 10 {
		t.Errorf("measured %v [%v, %v] n=%d, want 5.5 [2, 9] n=10", v.Measured, v.Lo, v.Hi, v.N)
	}
	// With --min-samples 11 the same claim is inconclusive.
	// One run gives one aggregate_tps sample: unbounded interval, so
	// inconclusive unless the point value is accepted. Aggregate =
	// 10 requests × (i+1 tokens) = 65 tokens / (last chunk at 101,100 ms −
	// first send at 10,000 ms = 91.1 s) = 0.7135 tok/s.
	agg, _ := ParseClaim("aggregate_tps >= 0.7")
	if v := Check(res, agg, CheckOptions{MinSamples: 1}); v.Verdict != Inconclusive {
		t.Errorf("single run without --accept-point: %s", v.Verdict)
	}
	if v := Check(res, agg, CheckOptions{MinSamples: 1, AcceptPoint: true}); v.Verdict != Holds || !near(v.Measured, 65/91.1) {
		t.Errorf("single run with --accept-point: %s %v (%s)", v.Verdict, v.Measured, v.Reason)
	}
	// How many more would decide it. The median's 95% interval needs 6
	// samples: with n = 6, P(x(1) ≤ median ≤ x(6)) = 1 − 2·(1/2)^6 =
	// 0.969 ≥ 0.95, while n = 5 gives 1 − 2/32 = 0.9375. One run: 5 more
	// runs, 6 in all. The p99 of 10 requests: the upper rank needs
	// P(B ≥ n) = 0.99^n ≤ 0.025, n ≥ 368 (0.99^367 = 0.0250 > 0.025), and
	// the lower one is then bounded too: 358 more requests.
	if v := Check(res, agg, CheckOptions{MinSamples: 1}); !strings.Contains(v.Reason, "5 more run(s) of this level (--repeats 6 in all)") {
		t.Errorf("per-run reason: %s", v.Reason)
	}
	p99, _ := ParseClaim("ttft_p99 < 10s")
	if v := Check(res, p99, CheckOptions{}); !strings.Contains(v.Reason, "358 more successful request(s)") {
		t.Errorf("p99 reason: %s", v.Reason)
	}
	// speedup (here 1: the group is its own concurrency-1 baseline) is a
	// ratio of medians without an interval: a point estimate, judged only
	// with --accept-point.
	sp, _ := ParseClaim("speedup{concurrency=1} >= 0.5")
	if v := Check(res, sp, CheckOptions{}); v.Verdict != Inconclusive || !strings.Contains(v.Reason, "--accept-point") {
		t.Errorf("speedup without --accept-point: %s (%s)", v.Verdict, v.Reason)
	}
	if v := Check(res, sp, CheckOptions{AcceptPoint: true}); v.Verdict != Holds || v.Measured != 1 || !strings.Contains(v.Reason, "point estimates accepted") {
		t.Errorf("speedup with --accept-point: %s %v (%s)", v.Verdict, v.Measured, v.Reason)
	}
	v = Check(res, cl, CheckOptions{MinSamples: 11})
	if v.Verdict != Inconclusive {
		t.Errorf("min samples 11: %s", v.Verdict)
	}
	var b strings.Builder
	if err := RenderVerdicts(&b, []Verdict{v}); err != nil || !strings.Contains(b.String(), "INCONCLUSIVE") {
		t.Errorf("render: %q %v", b.String(), err)
	}
	if math.IsNaN(v.Measured) {
		t.Error("measured should be set even when inconclusive")
	}
}

func FuzzParseClaim(f *testing.F) {
	for _, s := range []string{
		"per_stream_tps{concurrency=1} >= 490",
		"aggregate_tps{concurrency=32,label=vllm} >= 5,647 tok/s # seed",
		"ttft_p99 < 2.6s",
		"speedup{concurrency=2} > 2.17x",
		"requests_failed == 0",
		"itl_p50 <= 1e3us",
		"{}>=",
		"ttft{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClaim(s)
		if err != nil {
			return
		}
		if _, _, err := analyze.LookupMetric(c.Metric); err != nil {
			t.Fatalf("%q parsed to unknown metric %q", s, c.Metric)
		}
		if math.IsNaN(c.Bound) || math.IsInf(c.Bound, 0) {
			t.Fatalf("%q parsed to bound %v", s, c.Bound)
		}
		switch c.Op {
		case ">=", ">", "<=", "<", "==":
		default:
			t.Fatalf("%q parsed to op %q", s, c.Op)
		}
		for k := range c.Selector {
			if _, err := analyze.NormalizeKey(k); err != nil {
				t.Fatalf("%q parsed to key %q", s, k)
			}
		}
	})
}

// The claims shipped under traces/claims must always parse.
func TestShippedClaimsParse(t *testing.T) {
	for _, f := range testutil.Glob(t, filepath.Join("..", "..", "traces", "claims", "*.claims"), 4) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := ParseClaims(strings.NewReader(string(data)))
		if err != nil || len(cs) == 0 {
			t.Errorf("%s: %v (%d claims)", f, err, len(cs))
		}
	}
}

func TestCheckPoolsLabels(t *testing.T) {
	// Two labels of ten requests each: no label in the selector pools
	// them (20 requests) and says so; label=A picks ten.
	a, b := claimTrace(), claimTrace()
	a.label, b.label = "A", "B"
	res := analyzeTraces(t, analyze.Options{}, a, b)
	all, _ := ParseClaim("requests_ok == 20")
	v := Check(res, all, CheckOptions{})
	if v.Verdict != Holds || len(v.Warnings) == 0 || !strings.Contains(v.Warnings[len(v.Warnings)-1], "pools 2 labels") {
		t.Errorf("pooled: %+v", v)
	}
	one, _ := ParseClaim("requests_ok{label=A} == 10")
	if v := Check(res, one, CheckOptions{}); v.Verdict != Holds {
		t.Errorf("label A: %+v", v)
	}
}

// scalingClaimTrace: concurrency 1 at 100 and 1,000 input tokens, perN
// requests each, TTFT = 0.01 ms · L² (100 ms and 10,000 ms): ttft ∝ L²
// exactly, so ttft_exponent = 2 with interval [2, 2] from 3 requests on
// (no scatter), and prefill_tps = L/TTFT ∝ L^−1.
func scalingClaimTrace(perN int) testTrace {
	h := header("s", phase(0, 1, 100, 0, 0), phase(1, 1, 1000, 0, 0))
	h.Reference = ""
	var recs []trace.Record
	s := 0.0
	for ph, in := range []int{100, 1000} {
		ttft := 0.01 * float64(in*in)
		for i := 0; i < perN; i++ {
			recs = append(recs, trace.Record{ID: fmt.Sprint(ph, i), Phase: ph, InputTokens: in, Scheduled: int64(s * float64(msNs)), Sent: int64(s * float64(msNs)),
				Done: int64((s + ttft + 200) * float64(msNs)), Status: 200,
				Chunks: []trace.Chunk{chunk(s+ttft, "1", 0), chunk(s+ttft+100, ",", 0)}, Usage: `{"completion_tokens":2}`})
			s += ttft + 1000
		}
	}
	return testTrace{h: h, records: recs}
}

func TestCheckPrefillExponent(t *testing.T) {
	res := analyzeTraces(t, analyze.Options{}, scalingClaimTrace(2))
	for _, c := range []struct{ claim, verdict string }{
		{"ttft_exponent{concurrency=1} <= 1.2", DoesNotHold}, // [2, 2]
		{"ttft_exponent <= 2.5", Holds},
		{"prefill_tps_exponent >= -1.5", Holds}, // [−1, −1]
		{"ttft_exponent{input_tokens=100} <= 2", Inconclusive},
	} {
		cl, err := ParseClaim(c.claim)
		if err != nil {
			t.Fatal(err)
		}
		if v := Check(res, cl, CheckOptions{}); v.Verdict != c.verdict || v.Unit != "exponent" {
			t.Errorf("%s: %s %s (%s; measured %v [%v, %v] n=%d), want %s", c.claim, v.Verdict, v.Unit, v.Reason, v.Measured, v.Lo, v.Hi, v.N, c.verdict)
		}
	}
	// One request per length: the fit has no degree of freedom left, so
	// no interval and fewer than 3 samples; no "more runs" advice, which
	// is about medians.
	res = analyzeTraces(t, analyze.Options{}, scalingClaimTrace(1))
	cl, _ := ParseClaim("ttft_exponent <= 1.2")
	if v := Check(res, cl, CheckOptions{}); v.Verdict != Inconclusive || !near(v.Measured, 2) || strings.Contains(v.Reason, "more") {
		t.Errorf("two requests: %s %v (%s)", v.Verdict, v.Measured, v.Reason)
	}
}

// TestToBound: the sample counts check's help and docs/METRICS.md state
// for a bounded 95% interval are the ones the verdict rule uses: a median
// 6, a p10 or p90 36 (0.9³⁶ = 0.0225 ≤ 0.025 < 0.9³⁵), a p99 368; a mean
// has no order-statistic interval, so only --min-samples applies to it.
func TestToBound(t *testing.T) {
	ttft, _, _ := analyze.LookupMetric("ttft")
	agg, _, _ := analyze.LookupMetric("aggregate_tps")
	for _, c := range []struct {
		m    *analyze.Metric
		stat string
		want int64
	}{{ttft, "", 6}, {ttft, "p50", 6}, {agg, "", 6}, {ttft, "p10", 36}, {ttft, "p90", 36}, {ttft, "p99", 368}, {ttft, "mean", 0}, {ttft, "max", 0}} {
		if got := toBound(c.m, c.stat); got != c.want {
			t.Errorf("toBound(%s, %q) = %d, want %d", c.m.Name, c.stat, got, c.want)
		}
	}
}

// TestCheckAnyPercentile: a claim may name any percentile. The per-stream
// speeds of claimTrace are 1 … 10: numpy's p95 sits at position
// 0.95·9 = 8.55 between 9 and 10 → 9.55, and p75 at 6.75 → 7.75. A p95's
// 95% interval needs 72 samples for an upper bound (0.95^72 = 0.0249 ≤
// 0.025 < 0.95^71), so with 10 the claim is inconclusive and says so;
// --accept-point judges the value itself.
func TestCheckAnyPercentile(t *testing.T) {
	res := analyzeTraces(t, analyze.Options{}, claimTrace())
	cl, err := ParseClaim("per_stream_tps_p95{concurrency=1} > 9.5")
	if err != nil {
		t.Fatal(err)
	}
	v := Check(res, cl, CheckOptions{})
	if v.Verdict != Inconclusive || !near(v.Measured, 9.55) || !strings.Contains(v.Reason, "a p95 needs at least 72") {
		t.Errorf("p95: %s %v (%s)", v.Verdict, v.Measured, v.Reason)
	}
	if v := Check(res, cl, CheckOptions{AcceptPoint: true}); v.Verdict != Holds {
		t.Errorf("p95 with --accept-point: %s (%s)", v.Verdict, v.Reason)
	}
	cl, _ = ParseClaim("per_stream_tps_p75 < 7.7")
	if v := Check(res, cl, CheckOptions{AcceptPoint: true}); v.Verdict != DoesNotHold || !near(v.Measured, 7.75) {
		t.Errorf("p75: %s %v (%s)", v.Verdict, v.Measured, v.Reason)
	}
}
