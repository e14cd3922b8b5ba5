package render

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/golden"
	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update, "go test ./analyze/render -update")
}

// twoLabels analyzes the hand-made two-label traces (analyze's twoLabels,
// written to testdata by analyze's TestRenderFixtures) as A and B.
func twoLabels(t *testing.T) *analyze.Result {
	t.Helper()
	res, err := analyze.AnalyzeFiles(analyze.Options{},
		analyze.Input{Label: "A", Path: "testdata/two-labels-A.trace.zst"},
		analyze.Input{Label: "B", Path: "testdata/two-labels-B.trace.zst"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// rendered is the table of res built with o, as write writes it.
func rendered(t *testing.T, res *analyze.Result, o TableOptions, write func(io.Writer, *Table) error) string {
	t.Helper()
	tab, err := BuildTable(res, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := write(&b, tab); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGoldenTables renders the hand-made two-label traces (analyze's
// twoLabels, written to testdata by analyze's TestRenderFixtures) in every
// view and format.
func TestGoldenTables(t *testing.T) {
	res := twoLabels(t)
	cases := []struct {
		file   string
		opts   TableOptions
		render func(io.Writer, *Table) error
	}{
		{"seed_table.golden.txt", TableOptions{}, RenderText},
		{"seed_table.golden.md", TableOptions{}, RenderMarkdown},
		{"metrics_by_label.golden.txt", TableOptions{By: []string{analyze.KeyLabel}, Metrics: []string{"ttft_p50", "per_stream_tps_min", "itl_p99", "aggregate_tps"}},
			RenderText},
		{"metrics.golden.csv", TableOptions{By: []string{analyze.KeyConcurrency}, Metrics: []string{"ttft_p50", "per_stream_tps", "aggregate_tps", "speedup"}, Raw: true},
			RenderCSV},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			check(t, c.file, []byte(rendered(t, res, c.opts, c.render)))
		})
	}
	if _, err := BuildTable(res, TableOptions{Metrics: []string{"nope"}}); err == nil {
		t.Error("an unknown metric should be an error")
	}
}

// Evidence is for people: errors_clustered's per-value breakdown reads as
// words ("input tokens 5,000: 6 of 6 failed (http-status 6)"), not Go's
// map syntax ("map[classes:map[http-status:6] …]"); when one class is most
// of a value's failures, the server's own message is quoted instead of the
// class count. The key, failing and clean lists are not repeated.
func TestEvidenceInPlainWords(t *testing.T) {
	cases := []struct {
		name string
		rows []map[string]any
		want string
	}{
		{"classes", []map[string]any{
			{"input_tokens": 1000, "requests": 6, "failed": 0, "classes": map[string]int{}},
			{"input_tokens": 5000, "requests": 6, "failed": 6, "classes": map[string]int{"http-status": 6}},
		}, "input tokens 1,000: 0 of 6 failed; input tokens 5,000: 6 of 6 failed (http-status 6)"},
		{"server message", []map[string]any{
			{"input_tokens": 1000, "requests": 6, "failed": 0, "classes": map[string]int{}},
			{"input_tokens": 5000, "requests": 6, "failed": 6, "classes": map[string]int{"http-status": 6},
				"message": "HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size"},
		}, "input tokens 1,000: 0 of 6 failed; input tokens 5,000: 6 of 6 failed, HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size"},
	}
	for _, c := range cases {
		ev := map[string]any{"key": "input_tokens", "failing": []int{5000}, "clean": []int{1000}, "by_value": c.rows}
		if got := EvidenceText(ev); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

// Evidence values read as words and numbers: merged counts (float64) as
// integers, lists with commas, finish reasons counted by name.
func TestEvidenceValues(t *testing.T) {
	ev := map[string]any{"n_requests": 5.0, "of_requests": 1e6, "max_last_chunk_share": 0.75,
		"finish_reasons": map[string]int{"stop": 2, "length": 5, "": 1}, "per_stream_tps_median_by_repeat": []float64{500, 480.5},
		"missing": []int{1, 3}, "models": []string{"a", "b"}}
	got := EvidenceText(ev)
	want := "finish_reasons=(none) 1, length 5, stop 2 max_last_chunk_share=0.75 missing=1,3 models=a,b n_requests=5 of_requests=1000000 per_stream_tps_median_by_repeat=500,480.5"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// failingTrace is a hand-made run: at concurrency 1 one request of two
// fails with HTTP 500; at concurrency 2 both fail with HTTP 400 and
// llama.cpp's explanation in the body, sent 50 ms behind their schedule
// (a client_behind warning would be noise on a cell with nothing measured).
func failingTrace(t *testing.T) *analyze.Result {
	t.Helper()
	ms := int64(1_000_000)
	ph := func(i, c int) trace.Phase {
		return trace.Phase{Index: i, Name: fmt.Sprintf("c%d", c), Kind: "burst", Concurrency: c, InputTokens: 100, MaxTokens: 3, Requests: 2}
	}
	h := trace.Header{Format: trace.FormatName, Major: 1, Label: "srv", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m",
		Phases: []trace.Phase{ph(0, 1), ph(1, 2)}}
	ok := trace.Record{ID: "a", Phase: 0, InputTokens: 100, MaxTokens: 3, Scheduled: 0, Sent: 0, Done: 40 * ms, Status: 200,
		Chunks: []trace.Chunk{{T: 10 * ms, Text: "1", Tokens: 1}, {T: 20 * ms, Text: ",", Tokens: 1}, {T: 30 * ms, Text: " 2", Tokens: 1}}}
	e500 := trace.Record{ID: "b", Phase: 0, InputTokens: 100, MaxTokens: 3, Scheduled: 40 * ms, Sent: 40 * ms, Done: 41 * ms, Status: 500,
		Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 500 Internal Server Error", Body: "boom\nstack trace…"}}
	body := `{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}`
	e400 := func(id string) trace.Record {
		return trace.Record{ID: id, Phase: 1, InputTokens: 100, MaxTokens: 3, Scheduled: 0, Sent: 50 * ms, Done: 51 * ms, Status: 400,
			Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: body}}
	}
	a, err := analyze.New(analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := a.Trace("", "", h)
	for _, r := range []trace.Record{ok, e500, e400("c"), e400("d")} {
		acc.Add(&r)
	}
	return a.Result()
}

// Item: failures are visible in every table. A cell with some failed
// requests says how many and why; a cell where all failed says "all N
// failed" (not "— / —"), with the server's own words as a footnote; the
// CSV is tidy (one value per column); counts print as integers.
func TestFailuresInTables(t *testing.T) {
	res := failingTrace(t)
	text := rendered(t, res, TableOptions{}, RenderText)
	testutil.Contains(t, "text table", text,
		// c1: per-stream (3−1)/(30−10 ms) = 100 tok/s; aggregate 3 tokens
		// over 30 ms (first send 0 → last token 30 ms) = 100 tok/s.
		"100 / 100 (1 of 2 failed: http-status) [1]",
		"all 2 failed: http-status [2]",
		"[1] failed requests (http-status): HTTP 500 Internal Server Error: boom",
		"[2] failed requests (http-status): HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
	)
	if strings.Contains(text, "— / —") || strings.Contains(text, "client_behind") {
		t.Errorf("an all-failed cell shows no speeds and no lateness footnote:\n%s", text)
	}
	md := rendered(t, res, TableOptions{}, RenderMarkdown)
	if !strings.Contains(md, "| all 2 failed: http-status [2] |") {
		t.Errorf("Markdown table lacks the all-failed cell:\n%s", md)
	}
	check(t, "seed_table_failures.golden.txt", []byte(text))

	csvText := rendered(t, res, TableOptions{Raw: true}, RenderCSV)
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(SweepColumns, ",") {
		t.Errorf("CSV header %v, want %v", rows[0], SweepColumns)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	if len(rows) != 3 {
		t.Fatalf("CSV rows: %d, want header + 2:\n%s", len(rows), csvText)
	}
	for _, r := range rows[1:] {
		for i, v := range r {
			if strings.Contains(v, "/") || strings.Contains(v, " ") {
				t.Errorf("CSV cell %s=%q holds more than one value", rows[0][i], v)
			}
		}
	}
	c1, c2 := rows[1], rows[2]
	for _, w := range []struct {
		row       []string
		col, want string
	}{
		{c1, "per_stream_tps", "100"}, {c1, "aggregate_tps", "100"}, {c1, "ttft_p50_ms", "10"},
		{c1, "requests_ok", "1"}, {c1, "requests_failed", "1"}, {c1, "error_class", "http-status"},
		{c2, "per_stream_tps", ""}, {c2, "requests_ok", "0"}, {c2, "requests_failed", "2"},
	} {
		if got := w.row[col[w.col]]; got != w.want {
			t.Errorf("CSV %s of concurrency %s = %q, want %q", w.col, w.row[col["concurrency"]], got, w.want)
		}
	}

	mt := rendered(t, res, TableOptions{Metrics: []string{"requests_ok", "requests_failed", "output_tokens_p50", "ttft_p50"}},
		RenderText)
	check(t, "metrics_failures.golden.txt", []byte(mt))
	for _, bad := range []string{"1.00", "2.00", "3.00", "0.00"} {
		if strings.Contains(mt, bad) {
			t.Errorf("a count prints as %q, not an integer:\n%s", bad, mt)
		}
	}
	if !strings.Contains(mt, "all 2 failed: http-status [2]") {
		t.Errorf("metric table lacks the failed column:\n%s", mt)
	}
}

// A server's error message is shown escaped: a body that tries to clear
// the screen or end a Markdown cell does neither.
func TestServerMessageEscaped(t *testing.T) {
	h := trace.Header{Format: trace.FormatName, Major: 1, Label: "srv", Tokenizer: "o200k_base",
		Phases: []trace.Phase{{Index: 0, Name: "c1", Kind: "burst", Concurrency: 1, MaxTokens: 3, Requests: 1}}}
	rec := trace.Record{ID: "x", Phase: 0, MaxTokens: 3, Sent: 1, Done: 2, Status: 400,
		Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: `{"error":"evil\u001b[2J | FAKE 999 tok/s"}`}}
	a, err := analyze.New(analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Trace("", "", h).Add(&rec)
	tab, err := BuildTable(a.Result(), TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var txt, md bytes.Buffer
	if err := RenderText(&txt, tab); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, tab); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "\x1b") || !strings.Contains(txt.String(), `evil\x1b[2J | FAKE`) {
		t.Errorf("text: the escape is not escaped:\n%s", txt.String())
	}
	if !strings.Contains(md.String(), `evil\x1b[2J \| FAKE`) {
		t.Errorf("Markdown: the pipe or escape is not escaped:\n%s", md.String())
	}
}
