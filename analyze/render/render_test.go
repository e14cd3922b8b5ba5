package render

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update, "go test ./analyze/render -update")
}

// TestGoldenTables renders the hand-made two-label traces (analyze's
// twoLabels, written to testdata by analyze's TestRenderFixtures) in every
// view and format.
func TestGoldenTables(t *testing.T) {
	res, err := analyze.AnalyzeFiles(analyze.Options{},
		analyze.Input{Label: "A", Path: "testdata/two-labels-A.trace.zst"},
		analyze.Input{Label: "B", Path: "testdata/two-labels-B.trace.zst"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file   string
		opts   TableOptions
		render func(*bytes.Buffer, *Table) error
	}{
		{"seed_table.golden.txt", TableOptions{}, func(b *bytes.Buffer, t *Table) error { return RenderText(b, t) }},
		{"seed_table.golden.md", TableOptions{}, func(b *bytes.Buffer, t *Table) error { return RenderMarkdown(b, t) }},
		{"metrics_by_label.golden.txt", TableOptions{By: []string{analyze.KeyLabel}, Metrics: []string{"ttft_p50", "per_stream_tps_min", "itl_p99", "aggregate_tps"}},
			func(b *bytes.Buffer, t *Table) error { return RenderText(b, t) }},
		{"metrics.golden.csv", TableOptions{By: []string{analyze.KeyConcurrency}, Metrics: []string{"ttft_p50", "per_stream_tps", "aggregate_tps", "speedup"}, Raw: true},
			func(b *bytes.Buffer, t *Table) error { return RenderCSV(b, t) }},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tab, err := BuildTable(res, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := c.render(&buf, tab); err != nil {
				t.Fatal(err)
			}
			check(t, c.file, buf.Bytes())
		})
	}
	if _, err := BuildTable(res, TableOptions{Metrics: []string{"nope"}}); err == nil {
		t.Error("an unknown metric should be an error")
	}
}

// Evidence is for people: errors_clustered's per-value breakdown reads as
// words ("input tokens 5000: 6 of 6 failed (http-status 6)"), not Go's
// map syntax ("map[classes:map[http-status:6] …]").
func TestEvidenceInPlainWords(t *testing.T) {
	ev := map[string]any{"key": "input_tokens", "by_value": []map[string]any{
		{"input_tokens": 1000, "requests": 6, "failed": 0, "classes": map[string]int{}},
		{"input_tokens": 5000, "requests": 6, "failed": 6, "classes": map[string]int{"http-status": 6}},
	}}
	got := evidenceText(ev)
	want := "input tokens 1000: 0 of 6 failed; input tokens 5000: 6 of 6 failed (http-status 6) key=input_tokens"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
