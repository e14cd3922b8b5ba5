package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
)

// TestMetricListNamesEveryMetric: analyze --list-metrics shows every
// metric with its unit, and the definition sets.
func TestMetricListNamesEveryMetric(t *testing.T) {
	var b strings.Builder
	if err := WriteMetricList(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, m := range analyze.Metrics {
		if !strings.Contains(out, m.Name+" ["+m.Unit+"]") {
			t.Errorf("the list lacks %s [%s]", m.Name, m.Unit)
		}
	}
	if !strings.Contains(out, "definition sets (--definitions): "+strings.Join(analyze.DefinitionNames(), ", ")) {
		t.Errorf("the list does not end with the definition sets:\n%s", out)
	}
}

// TestMetricNamesAreAccepted: every metric name completion offers is one
// analyze accepts, and the statistics are spelled out ("ttft_p99").
func TestMetricNamesAreAccepted(t *testing.T) {
	names := MetricNames()
	for _, n := range names {
		if _, _, err := analyze.LookupMetric(n); err != nil {
			t.Errorf("metric %q is offered but refused: %v", n, err)
		}
	}
	for _, want := range []string{"ttft_p99", "per_stream_tps_min"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not offered", want)
		}
	}
}

// TestDefaultLevelsForRatePhases: without --by, a trace of burst phases is grouped
// by concurrency, one of rate phases by rate, and one with both by both.
func TestDefaultLevelsForRatePhases(t *testing.T) {
	burst := trace.Phase{Index: 0, Name: "c4", Kind: "burst", Concurrency: 4, Requests: 1}
	rate := trace.Phase{Index: 1, Name: "r2", Kind: "rate", Rate: 2, Requests: 1}
	for _, c := range []struct {
		phases []trace.Phase
		want   []string
	}{
		{[]trace.Phase{burst}, []string{analyze.KeyConcurrency}},
		{[]trace.Phase{rate}, []string{analyze.KeyRate}},
		{[]trace.Phase{burst, rate}, []string{analyze.KeyConcurrency, analyze.KeyRate}},
	} {
		a, err := analyze.New(analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		acc := a.Trace("t", "t.trace.zst", trace.Header{Format: trace.FormatName, Major: 1, Tokenizer: "o200k_base", Phases: c.phases})
		for _, p := range c.phases {
			acc.Add(&trace.Record{ID: p.Name, Phase: p.Index, Sent: 1e9, Done: 2e9, Status: 200,
				Chunks: []trace.Chunk{{T: 15e8, Bytes: 10, Text: "1", Tokens: 1}}})
		}
		if got := DefaultLevels(a.Result()); !slices.Equal(got, c.want) {
			t.Errorf("phases %v: keys %v, want %v", c.phases, got, c.want)
		}
	}
}
