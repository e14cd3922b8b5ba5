package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// ttftRecord is a successful count-up response sent at sentMs whose first
// text arrives ttftMs later; input is its prompt's length.
func ttftRecord(id string, ph, input int, sentMs, ttftMs float64) trace.Record {
	r := okRecord(id, ph, sentMs)
	r.InputTokens = input
	r.Usage = `{"completion_tokens":7}`
	for i := range r.Chunks {
		r.Chunks[i].T = int64((sentMs + ttftMs + 10*float64(i)) * float64(msNs))
	}
	r.Done = r.Chunks[len(r.Chunks)-1].T + 10*msNs
	return r
}

// scalingTrace has one concurrency-1 phase per input length, with one
// request per TTFT given for that length.
func scalingTrace(label string, ttfts map[int][]float64, inputs ...int) testTrace {
	var phases []trace.Phase
	var recs []trace.Record
	at := 0.0
	for i, in := range inputs {
		phases = append(phases, phase(i, 1, in, 7, 0))
		for j, ttft := range ttfts[in] {
			recs = append(recs, ttftRecord(label+phaseName(i)+string(rune('a'+j)), i, in, at, ttft))
			at += ttft + 1000
		}
	}
	return testTrace{h: header(label, phases...), records: recs}
}

func pow10(x float64) float64 { return math.Pow(10, x) }

// The exponent of a hand-made quadratic prefill, worked out in base-10
// logs (a slope is the same in any base). Inputs L = 100, 1,000, 10,000
// (u = log10 L = 2, 3, 4), two requests each with log10 TTFT/ms =
// 2u − 3 ± 0.1: TTFT = 10^0.9 and 10^1.1 ms at 100 tokens, 10^2.9 and
// 10^3.1 at 1,000, 10^4.9 and 10^5.1 at 10,000.
//
//	n = 6, ū = 3, v̄ = 3
//	Sxx = 2·((−1)² + 0² + 1²) = 4
//	Sxy = 2·((−1)(−2) + 0·0 + 1·2) = 8          → k = 8/4 = 2
//	SSE = 6 · 0.1² = 0.06, s² = 0.06/4 = 0.015
//	se(k) = √(0.015/4) = 0.0612372
//	t(0.975, 4) = 2.7764451                        → k = 2 ± 0.1700218
//
// prefill_tps = L / TTFT: log10 = u − (v − 3) (TTFT in s), slope 1 − 2 = −1
// with the same residuals, so −1 ± 0.1700218. The interval's lower end
// 1.83 > 1.2 over a 100× range: prefill_superlinear.
func TestPrefillExponentHandMade(t *testing.T) {
	quad := map[int][]float64{
		100:   {pow10(0.9), pow10(1.1)},
		1000:  {pow10(2.9), pow10(3.1)},
		10000: {pow10(4.9), pow10(5.1)},
	}
	res := analyzeTraces(t, Options{}, scalingTrace("quad", quad, 100, 1000, 10000))
	const half = 0.1700218
	close := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }

	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
	for name, want := range map[string]float64{"ttft_exponent": 2, "prefill_tps_exponent": -1} {
		v := g.Values[name]
		if !close(v.Value, want) || !close(v.Lo, want-half) || !close(v.Hi, want+half) || v.N != 6 {
			t.Errorf("%s = %.7f [%.7f, %.7f] n=%d, want %v ± %v n=6", name, v.Value, v.Lo, v.Hi, v.N, want, half)
		}
	}
	sc := res.PrefillScaling()
	if len(sc) != 2 || sc[0].Metric != "ttft" || sc[1].Metric != "prefill_tps" || sc[0].Label != "quad" || sc[0].Concurrency != 1 ||
		len(sc[0].InputTokens) != 3 || sc[0].InputTokens[2] != 10000 || !close(sc[0].Exponent.Value, 2) {
		t.Errorf("PrefillScaling: %+v", sc)
	}
	w := hasWarning(res.Warnings, WarnPrefillSuperlinear)
	if w == nil {
		t.Fatalf("no %s warning: %+v", WarnPrefillSuperlinear, res.Warnings)
	}
	if w.Keys[KeyLabel] != "quad" || w.Keys[KeyConcurrency] != 1 || w.Evidence["ttft_exponent"] != 2.0 ||
		w.Evidence["ttft_exponent_lo"] != 1.83 || w.Evidence["prefill_tps_exponent"] != -1.0 {
		t.Errorf("warning %+v", w)
	}
	// One input length per group: nothing to fit, the value is null.
	g = findGroup(t, res.Groups([]string{KeyConcurrency, KeyInputTokens}), map[string]any{KeyInputTokens: 100})
	if v := g.Values["ttft_exponent"]; v.Valid() {
		t.Errorf("one input length gave an exponent: %+v", v)
	}
	doc := NewDocument(res, []string{KeyInputTokens})
	if len(doc.PrefillScaling) != 2 {
		t.Errorf("JSON prefill_scaling: %+v", doc.PrefillScaling)
	}
}

// The warning's conditions, one at a time.
func TestPrefillSuperlinearThresholds(t *testing.T) {
	cases := []struct {
		name   string
		ttfts  map[int][]float64
		inputs []int
		warn   bool
		k      float64 // the exponent, where it is exact
	}{
		// TTFT = 0.1 ms · L exactly: k = 1, SSE = 0, interval [1, 1].
		{"linear", map[int][]float64{100: {10, 10}, 1000: {100, 100}, 10000: {1000, 1000}}, []int{100, 1000, 10000}, false, 1},
		// TTFT = 20 ms + 0.01 ms · L: 21, 30, 120 ms; a fixed cost
		// flattens the short end, k < 1.
		{"linear with overhead", map[int][]float64{100: {21, 21}, 1000: {30, 30}, 10000: {120, 120}}, []int{100, 1000, 10000}, false, math.NaN()},
		// TTFT ∝ L² exactly (k = 2, interval [2, 2]) but over 5× only.
		{"quadratic over 5x", map[int][]float64{1000: {100, 100}, 5000: {2500, 2500}}, []int{1000, 5000}, false, 2},
		// The same over 10×: 100 and 10,000 ms.
		{"quadratic over 10x", map[int][]float64{1000: {100, 100}, 10000: {10000, 10000}}, []int{1000, 10000}, true, 2},
		// k = 2 but one request per length: n − 2 = 0, no interval, so
		// not clearly above 1.
		{"quadratic, two requests", map[int][]float64{1000: {100}, 10000: {10000}}, []int{1000, 10000}, false, 2},
	}
	for _, c := range cases {
		res := analyzeTraces(t, Options{}, scalingTrace("x", c.ttfts, c.inputs...))
		g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
		k := g.Values["ttft_exponent"].Value
		if !math.IsNaN(c.k) && math.Abs(k-c.k) > 1e-6 {
			t.Errorf("%s: k = %v, want %v", c.name, k, c.k)
		}
		if c.name == "linear with overhead" && !(k > 0 && k < 1) {
			t.Errorf("%s: k = %v, want below 1", c.name, k)
		}
		if got := hasWarning(res.Warnings, WarnPrefillSuperlinear) != nil; got != c.warn {
			t.Errorf("%s: warning %v, want %v (k = %v)", c.name, got, c.warn, g.Values["ttft_exponent"])
		}
	}
}

// A fixed cost flattens a sweep's short end: TTFT = 100 ms + 0.0001 ms·L²
// at L = 100, 1,000, 10,000 is 101, 200 and 10,100 ms. Over the whole
// sweep (u = log10 L = 2, 3, 4) the slope is (log10 10,100 − log10 101)/2
// = log10(100)/2 = 1 exactly, but from 1,000 to 10,000 (a 10× range of
// its own) it is log10(10,100/200) = log10 50.5 = 1.7032914: the warning
// names that range; the footnote's whole-sweep exponent stays 1.
func TestPrefillSuperlinearOverTheLongEnd(t *testing.T) {
	ttft := func(l float64) float64 { return 100 + 0.0001*l*l }
	res := analyzeTraces(t, Options{}, scalingTrace("fixed+quad", map[int][]float64{
		100: {ttft(100), ttft(100)}, 1000: {ttft(1000), ttft(1000)}, 10000: {ttft(10000), ttft(10000)},
	}, 100, 1000, 10000))
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1})
	if k := g.Values["ttft_exponent"].Value; math.Abs(k-1) > 1e-6 {
		t.Errorf("whole-sweep exponent %v, want 1", k)
	}
	w := hasWarning(res.Warnings, WarnPrefillSuperlinear)
	if w == nil {
		t.Fatalf("no warning: %+v", res.Warnings)
	}
	in, _ := w.Evidence["input_tokens"].([]int)
	if w.Evidence["ttft_exponent"] != 1.703 || len(in) != 2 || in[0] != 1000 || in[1] != 10000 || w.Evidence["prefill_tps_exponent"] != -0.703 ||
		!strings.Contains(w.Message, "input^1.70 (95% interval 1.70 to 1.70) from 1,000 to 10,000 input tokens at concurrency 1") {
		t.Errorf("warning %s %v", w.Message, w.Evidence)
	}
	sc := res.PrefillScaling()
	if len(sc) != 2 || sc[0].Steepest == nil || math.Abs(sc[0].Steepest.Exponent.Value-1.7032914) > 1e-6 ||
		len(sc[0].Steepest.InputTokens) != 2 || sc[1].Steepest != nil {
		t.Errorf("PrefillScaling: %+v", sc)
	}
}

// Past 16,384 samples a Dist is a histogram; the fit then reads each
// bucket as its geometric middle, within half a bucket of the true log
// (ln 1.02 / 2 = 0.0099). 20,000 TTFTs from 10 to 10,000 ms, log-uniform:
// the mean log and the log variance agree with the exact ones to that.
func TestLogStatsHistogram(t *testing.T) {
	var d Dist
	var exact logStats
	for i := 0; i < 20000; i++ {
		v := math.Pow(10, 1+3*float64(i)/20000)
		d.Add(v)
		exact.merge(logStats{n: 1, mean: math.Log(v)})
	}
	if d.Exact() {
		t.Fatal("the Dist did not fold into its histogram")
	}
	got := d.logStats()
	if got.n != exact.n || math.Abs(got.mean-exact.mean) > 0.0099 || math.Abs(got.m2/got.n-exact.m2/exact.n) > 0.02*exact.m2/exact.n {
		t.Errorf("histogram log stats n=%v mean=%v var=%v, exact n=%v mean=%v var=%v",
			got.n, got.mean, got.m2/got.n, exact.n, exact.mean, exact.m2/exact.n)
	}
}

// Open-loop phases have a rate, not a concurrency: the fit and the
// warning name the rate ("at rate 2 req/s"), and phases at different
// rates are fitted apart rather than pooled as "concurrency 0". The TTFTs
// are the quadratic ones of TestPrefillSuperlinearThresholds (k = 2).
func TestPrefillScalingAtARate(t *testing.T) {
	tt := scalingTrace("open", map[int][]float64{1000: {100, 100}, 10000: {10000, 10000}}, 1000, 10000)
	for i := range tt.h.Phases {
		tt.h.Phases[i].Kind, tt.h.Phases[i].Concurrency, tt.h.Phases[i].Rate = "rate", 0, 2
	}
	// The same lengths at rate 4, linear: 100 and 1,000 ms (k = 1).
	more := scalingTrace("open", map[int][]float64{1000: {100, 100}, 10000: {1000, 1000}}, 1000, 10000)
	for i, p := range more.h.Phases {
		p.Index, p.Name, p.Kind, p.Concurrency, p.Rate = i+2, phaseName(i+2), "rate", 0, 4
		tt.h.Phases = append(tt.h.Phases, p)
	}
	for _, r := range more.records {
		r.Phase += 2
		r.ID = "more" + r.ID
		for j := range r.Chunks {
			r.Chunks[j].T += 1e12
		}
		r.Sent, r.Scheduled, r.Done = r.Sent+1e12, r.Scheduled+1e12, r.Done+1e12
		tt.records = append(tt.records, r)
	}
	res := analyzeTraces(t, Options{}, tt)
	sc := res.PrefillScaling()
	if len(sc) != 4 || sc[0].Rate != 2 || math.Abs(sc[0].Exponent.Value-2) > 1e-6 || sc[2].Rate != 4 || math.Abs(sc[2].Exponent.Value-1) > 1e-6 {
		t.Fatalf("PrefillScaling: %+v", sc)
	}
	w := hasWarning(res.Warnings, WarnPrefillSuperlinear)
	if w == nil || w.Keys[KeyRate] != 2.0 || w.Keys[KeyConcurrency] != nil || !strings.Contains(w.Message, "at rate 2 req/s") {
		t.Errorf("warning: %+v", w)
	}
	if n := len(res.Warnings); n != 1 {
		t.Errorf("%d warnings, want prefill_superlinear at rate 2 alone: %+v", n, res.Warnings)
	}
}
