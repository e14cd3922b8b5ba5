package analyze

import (
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestMergedTraceIsOneRun: a trace merged from 3 of 4 shards on 2 hosts is
// one run per phase. Two requests, one per shard (okRecord: 7 tokens each,
// content from sent+100 to sent+140 ms), sent at 0 and 20 ms on the merged
// clock: the phase's window is first send 0 → last token 160 ms, so
// aggregate_tps = (7 + 7) / 0.160 s = 87.5 tok/s. The hosts' maximum clock
// errors 1 ms and 2 ms give a worst-case alignment error of 3 ms.
func TestMergedTraceIsOneRun(t *testing.T) {
	h := header("merged", phase(0, 2, 100, 7, 0))
	clk := func(maxNs int64) trace.Clock {
		return trace.Clock{Source: "adjtimex", Synced: true, EstErrorNs: 1000, MaxErrorNs: maxNs}
	}
	h.Shards = []trace.Shard{
		{Index: 0, Count: 4, Host: "a", Clock: clk(1_000_000)},
		{Index: 1, Count: 4, Host: "b", Clock: clk(2_000_000)},
		{Index: 3, Count: 4, Host: "b", Clock: clk(500_000)},
	}
	h.ShardsMissing = []int{2}
	s0, s1 := 0, 1
	r0, r1 := okRecord("a", 0, 0), okRecord("b", 0, 20)
	r0.Shard, r1.Shard = &s0, &s1
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{r0, r1}})
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 2})
	wantValues(t, g, map[string]float64{"aggregate_tps": 87.5})
	doc := NewDocument(res, []string{KeyConcurrency})
	w := hasWarning(doc.Warnings, WarnClockAlignment)
	if w == nil || !strings.Contains(w.Message, "±3ms") || !strings.Contains(w.Message, "3 shards on 2 hosts") {
		t.Errorf("clock_alignment warning %+v", w)
	}
	if w := hasWarning(doc.Warnings, WarnShardsMissing); w == nil || !strings.Contains(w.Message, "1 of its 4 shards") {
		t.Errorf("shards_missing warning %+v", w)
	}
	// The same shards on one host share one clock: no alignment warning.
	for i := range h.Shards {
		h.Shards[i].Host = "a"
	}
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{r0, r1}})
	if w := hasWarning(NewDocument(res, []string{KeyConcurrency}).Warnings, WarnClockAlignment); w != nil {
		t.Errorf("one host warned %+v", w)
	}
}
