package analyze

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./analyze -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./analyze -update rewrites it after a deliberate change)\n--- got ---\n%s", name, got)
	}
}

// twoLabels is handTrace as label A, and a faster B (every time after the
// send halved) with a not-streamed response at concurrency 2.
func twoLabels() []testTrace {
	a := handTrace()
	a.label = "A"
	b := handTrace()
	b.label = "B"
	b.h.WorkloadDigest = a.h.WorkloadDigest
	for i := range b.records {
		r := &b.records[i]
		for j := range r.Chunks {
			r.Chunks[j].T = r.Sent + (r.Chunks[j].T-r.Sent)/2
		}
		r.Done = r.Sent + (r.Done-r.Sent)/2
	}
	b.records[2].Chunks = []trace.Chunk{chunk(float64(b.records[2].Done)/1e6-1, "1, 2", 0)}
	return []testTrace{a, b}
}

func TestGoldenJSON(t *testing.T) {
	res := analyzeTraces(t, Options{}, twoLabels()...)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, NewDocument(res, []string{KeyConcurrency})); err != nil {
		t.Fatal(err)
	}
	golden(t, "analysis.golden.json", buf.Bytes())
	// The schema promises: schema + version, groups with keys and every
	// metric by name, warnings with evidence.
	var doc struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
		Groups  []struct {
			Keys    map[string]any                `json:"keys"`
			Metrics map[string]map[string]float64 `json:"metrics"`
		} `json:"groups"`
		Warnings []struct {
			Code     string         `json:"code"`
			Evidence map[string]any `json:"evidence"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != SchemaName || doc.Version != SchemaVersion || len(doc.Groups) != 4 {
		t.Fatalf("doc header %s %d groups %d", doc.Schema, doc.Version, len(doc.Groups))
	}
	for _, m := range Metrics {
		for _, s := range statNames(m) {
			if _, ok := doc.Groups[0].Metrics[s]; !ok {
				t.Errorf("group lacks metric %s", s)
			}
		}
	}
	if len(doc.Warnings) == 0 || doc.Warnings[0].Evidence == nil {
		t.Errorf("warnings %+v", doc.Warnings)
	}
}

func TestGoldenTables(t *testing.T) {
	res := analyzeTraces(t, Options{}, twoLabels()...)
	cases := []struct {
		file   string
		opts   TableOptions
		render func(*bytes.Buffer, *Table) error
	}{
		{"seed_table.golden.txt", TableOptions{}, func(b *bytes.Buffer, t *Table) error { return RenderText(b, t) }},
		{"seed_table.golden.md", TableOptions{}, func(b *bytes.Buffer, t *Table) error { return RenderMarkdown(b, t) }},
		{"metrics_by_label.golden.txt", TableOptions{By: []string{KeyLabel}, Metrics: []string{"ttft_p50", "per_stream_tps_min", "itl_p99", "aggregate_tps"}},
			func(b *bytes.Buffer, t *Table) error { return RenderText(b, t) }},
		{"metrics.golden.csv", TableOptions{By: []string{KeyConcurrency}, Metrics: []string{"ttft_p50", "per_stream_tps", "aggregate_tps", "speedup"}, Raw: true},
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
			golden(t, c.file, buf.Bytes())
		})
	}
	if _, err := BuildTable(res, TableOptions{Metrics: []string{"nope"}}); err == nil {
		t.Error("an unknown metric should be an error")
	}
}

func TestAnalyzeFiles(t *testing.T) {
	// handTrace written to a file and read back gives the same answer as
	// in memory: r0's per-stream speed is 100 tok/s.
	path := filepath.Join(t.TempDir(), "hand.trace.zst")
	tt := handTrace()
	w, err := trace.Create(path, tt.h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tt.records {
		if err := w.Write(&tt.records[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := AnalyzeFiles(Options{}, Input{Label: "file", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	g := findGroup(t, res.Groups([]string{KeyConcurrency}), map[string]any{KeyConcurrency: 1, KeyLabel: "file"})
	wantValues(t, g, map[string]float64{"per_stream_tps": 100, "ttft": 100})
	if _, err := AnalyzeFiles(Options{}, Input{Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing file should be an error")
	}
}
