package analyze

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	goldenfile "github.com/llmreplay/llmreplay/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update, "go test ./analyze -update")
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

// renderFixtures are twoLabels written as trace files for analyze/render's
// golden tables: the renderers live in their own package, which cannot
// reach these unexported helpers, so the hand-made traces travel as files.
// -update rewrites them; otherwise the test checks they still hold what
// twoLabels makes, so the two never drift apart.
var renderFixtures = []string{"render/testdata/two-labels-A.trace.zst", "render/testdata/two-labels-B.trace.zst"}

func TestRenderFixtures(t *testing.T) {
	for i, tt := range twoLabels() {
		if *update {
			testutil.WriteFile(t, renderFixtures[i], traceBytes(t, tt))
			continue
		}
		r, err := trace.Open(renderFixtures[i])
		if err != nil {
			t.Fatalf("%v (go test ./analyze -update writes it)", err)
		}
		n := 0
		for r.Scan() {
			if d := cmp.Diff(tt.records[n], *r.Record(), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s record %d differs from twoLabels (go test ./analyze -update):\n%s", renderFixtures[i], n, d)
			}
			n++
		}
		r.Close()
		if n != len(tt.records) {
			t.Errorf("%s holds %d records, twoLabels %d", renderFixtures[i], n, len(tt.records))
		}
	}
}

func TestAnalyzeFiles(t *testing.T) {
	// handTrace written to a file and read back gives the same answer as
	// in memory: r0's per-stream speed is 100 tok/s.
	path := filepath.Join(t.TempDir(), "hand.trace.zst")
	tt := handTrace()
	testutil.WriteFile(t, path, traceBytes(t, tt))
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
