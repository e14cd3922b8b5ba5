package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// formulaTrace writes a hand-made trace whose server strings (label as
// replay defaults it, model id, finish reasons, a scrape's target, metric
// name and labels, a failed scrape's error) all start like spreadsheet
// formulas: two requests of four chunks and two scrapes.
func formulaTrace(t *testing.T, path, text string) {
	t.Helper()
	const ms = int64(1_000_000)
	h := trace.Header{Label: text, Model: text, Tokenizer: "o200k_base", API: "openai-chat", URL: "http://127.0.0.1:1",
		Phases: []trace.Phase{{Index: 0, Name: text, Kind: "burst", Concurrency: 2, InputTokens: 100, MaxTokens: 4, Requests: 2}}}
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteScrape(&trace.Scrape{T: ms, Source: trace.SourceMetrics, Target: text,
		Samples: []trace.Sample{{Name: text, Labels: `model_name="` + text + `"`, Value: 1}}})
	w.WriteScrape(&trace.Scrape{T: 2 * ms, Source: trace.SourceMetrics, Target: "http://127.0.0.1:1/metrics", Error: text})
	for i := range 2 {
		rec := trace.Record{ID: text + strconv.Itoa(i), Index: i, InputTokens: 100, MaxTokens: 4, Sent: ms, Headers: 5 * ms, Done: 50 * ms,
			Status: 200, FinishReason: text, Usage: `{"completion_tokens":4,"prompt_tokens":100}`}
		for k := range 4 {
			rec.Chunks = append(rec.Chunks, trace.Chunk{T: int64(10+k) * ms, Bytes: 40, Text: "1"})
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExportCSVGuardsFormulas: `export --format csv` writes every text
// cell as `analyze --format csv` writes its labels: a cell a spreadsheet
// would run as a formula (starting with = + - @, or a tab or CR) is text
// behind an apostrophe, control characters are visible escapes, and
// numbers, negative ones included, stay numbers. Before the fix labels,
// model ids, finish reasons and scrape strings reached the cells as they
// were.
func TestExportCSVGuardsFormulas(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	var traces []string
	for i, text := range []string{`=HYPERLINK("http://evil.example/","click")`, "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)", "\tTAB=1+1", "\rCR=1+1"} {
		p := filepath.Join(dir, "f"+strconv.Itoa(i)+".trace.zst")
		formulaTrace(t, p, text)
		traces = append(traces, p)
	}
	out := filepath.Join(dir, "tables")
	if o, e, code := run(t, nil, bin, append([]string{"export", "--format", "csv", "-o", out}, traces...)...); code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, o, e)
	}
	want := map[string]bool{"'=HYPERLINK(\"http://evil.example/\",\"click\")": false, "'@SUM(1+1)": false, `\tTAB=1+1`: false}
	for _, table := range []string{"requests", "chunks", "runs", "server_metrics"} {
		b, err := os.ReadFile(filepath.Join(out, table+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatalf("%s.csv does not parse: %v", table, err)
		}
		if len(rows) < 2 {
			t.Fatalf("%s.csv has no rows", table)
		}
		reported := map[int]bool{}
		for _, r := range rows[1:] {
			for i, cell := range r {
				if _, ok := want[cell]; ok {
					want[cell] = true
				}
				if cell == "" || !strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					continue
				}
				if _, err := strconv.ParseFloat(cell, 64); err == nil && strings.Trim(cell, "+-.0123456789eE") == "" {
					continue // a number, negative or not
				}
				if !reported[i] {
					reported[i] = true
					t.Errorf("%s.csv column %s holds a formula cell %q", table, rows[0][i], cell)
				}
			}
		}
	}
	for cell, seen := range want {
		if !seen {
			t.Errorf("no cell reads %q (guarded as analyze guards it)", cell)
		}
	}
}

// TestExportNeverOverwritesInput: export --force replaces earlier tables,
// never one of its inputs: a trace named like a table in the -o folder
// (or a hard link to one) is refused, exit 2 and one line, as report and
// trace merge refuse it, and the trace is left as it was. Before the fix
// the trace was replaced by the table.
func TestExportNeverOverwritesInput(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	out := filepath.Join(dir, "tables")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(out, "requests.csv")
	formulaTrace(t, named, "plain")
	orig, err := os.ReadFile(named)
	if err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "linked.trace.zst")
	formulaTrace(t, linked, "plain")
	if err := os.Link(linked, filepath.Join(out, "chunks.parquet")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format, input, clash string
	}{{"csv", named, named}, {"parquet", linked, filepath.Join(out, "chunks.parquet")}} {
		before, _ := os.ReadFile(c.input)
		o, e, code := run(t, nil, bin, "export", "--format", c.format, "--force", "-o", out, c.input)
		if code != 2 {
			t.Errorf("export --force over its input %s: exit %d, want 2\n%s%s", c.input, code, o, e)
		}
		oneLine(t, "export over its input", e, c.clash, "also an input")
		after, err := os.ReadFile(c.input)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("export --force changed its input %s (%v)", c.input, err)
		}
	}
	if b, _ := os.ReadFile(named); !bytes.Equal(b, orig) {
		t.Error("the trace named requests.csv was overwritten")
	}
	// What --force is for still works: earlier tables are replaced.
	other := filepath.Join(dir, "other")
	for range 2 {
		if o, e, code := run(t, nil, bin, "export", "--format", "csv", "--force", "-o", other, named); code != 0 {
			t.Fatalf("export --force over earlier tables: exit %d\n%s%s", code, o, e)
		}
	}
}

// TestExportBadInputLeavesNoFolder: export of a trace that is missing or
// not a trace exits 2 with one line and does not create its -o folder
// (before, the folder was made first and left empty).
func TestExportBadInputLeavesNoFolder(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	notTrace := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notTrace, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{filepath.Join(dir, "missing.trace.zst"), notTrace} {
		out := filepath.Join(dir, "tables", "new")
		o, e, code := run(t, nil, bin, "export", in, "-o", out)
		if code != 2 || len(strings.Split(strings.TrimSpace(e), "\n")) != 1 || o != "" {
			t.Errorf("export %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", in, code, o, e)
		}
		if _, err := os.Stat(filepath.Join(dir, "tables")); err == nil {
			t.Errorf("export %s left its -o folder behind", in)
		}
	}
}
