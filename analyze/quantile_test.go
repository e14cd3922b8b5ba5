package analyze

import (
	"fmt"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestGroupQuantileByHand: 20 requests at concurrency 1 whose TTFTs are
// 10, 20, …, 200 ms. Worked by hand with numpy's linear interpolation (the
// rule every named percentile uses): p95 sits at position 0.95·19 = 18.05
// between the 19th (190 ms) and 20th (200 ms) values: 190.5 ms; p50 at 9.5:
// 105 ms, the group's ttft_p50. Twenty samples cannot bound a p95 from
// above (the 95% interval's upper rank would be the 21st), so Hi is +Inf.
// A per-run metric has no per-request quantile.
func TestGroupQuantileByHand(t *testing.T) {
	var recs []trace.Record
	for i := 0; i < 20; i++ {
		ttft := float64(10 * (i + 1))
		start := int64(i) * 1000 * msNs
		recs = append(recs, trace.Record{ID: fmt.Sprint(i), Phase: 0, InputTokens: 10, MaxTokens: 2, Scheduled: start, Sent: start,
			Status: 200, Done: start + int64((ttft+20)*float64(msNs)),
			Chunks: []trace.Chunk{chunk(float64(start/msNs)+ttft, "1", 1), chunk(float64(start/msNs)+ttft+10, ",", 1)}})
	}
	res := analyzeTraces(t, Options{}, testTrace{label: "q", h: header("q", phase(0, 1, 10, 2, 0)), records: recs})
	g := res.Groups(nil)[0]
	p95, ok := g.Quantile("ttft", 0.95)
	if !ok || !near(p95.Value, 190.5) || p95.N != 20 {
		t.Errorf("ttft p95 = %+v (ok %v), want 190.5 over 20", p95, ok)
	}
	if !p95.HasInterval() || p95.Hi <= p95.Value {
		t.Errorf("ttft p95 interval [%g, %g]: want a lower bound and +Inf above", p95.Lo, p95.Hi)
	}
	p50, _ := g.Quantile("ttft", 0.5)
	if !near(p50.Value, 105) || p50 != g.Values["ttft_p50"] {
		t.Errorf("ttft p50 = %+v, want 105 and the group's ttft_p50 %+v", p50, g.Values["ttft_p50"])
	}
	if _, ok := g.Quantile("aggregate_tps", 0.95); ok {
		t.Error("a per-run metric has no per-request quantile")
	}
	if _, ok := g.Quantile("nope", 0.95); ok {
		t.Error("an unknown metric has a quantile")
	}
}
