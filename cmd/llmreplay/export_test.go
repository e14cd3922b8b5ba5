package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/export"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/parquet-go/parquet-go"
)

// TestExportParquetRebuildsSweep: export through the CLI with default flags
// (--format parquet), read the files back, and rebuild the sweep table the
// way docs/EXPORT.md's queries do. By hand: the fast trace's requests stream
// 8 tokens 2 ms apart, so per-stream = (8−1)/(7·2 ms) = 500 tok/s; the slow
// one 10 ms apart = 100 tok/s (the docs' median(per_stream_tps) query). The
// runs table carries the aggregate as the analysis computed it: checked
// against analyze's own CSV row for the same label and concurrency.
func TestExportParquetRebuildsSweep(t *testing.T) {
	dir := t.TempDir()
	fast, slow := filepath.Join(dir, "fast.trace.zst"), filepath.Join(dir, "slow.trace.zst")
	writeReportTrace(t, fast, "vllm", "m", 2, 0, 1, 4)
	writeReportTrace(t, slow, "llama", "m", 10, 1, 1, 4)
	out := filepath.Join(dir, "tables")
	stdout, stderr, err := runAnalyzeCLI(t, nil, "export", fast, slow, "-o", out)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	// 5 + 5 ok requests with 8 chunks; 2 failed (none).
	if !strings.Contains(stdout, "12 requests, 80 chunks, 4 runs") {
		t.Errorf("export says %q", stdout)
	}
	reqs, err := parquet.ReadFile[export.RequestRow](filepath.Join(out, "requests.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	med := map[string][]float64{}
	failed := 0
	for _, r := range reqs {
		if !r.OK {
			failed++
			if r.ErrorClass != "http-status" {
				t.Errorf("failed request class %q", r.ErrorClass)
			}
			continue
		}
		k := r.Label + "/" + map[int64]string{1: "1", 4: "4"}[r.Concurrency]
		med[k] = append(med[k], r.PerStreamTPS)
		if r.Sent.IsZero() || r.SentNs != 1e6 && r.SentNs != 1001e6 {
			t.Errorf("request %s: sent %d ns at %v", r.RequestID, r.SentNs, r.Sent)
		}
	}
	if failed != 2 {
		t.Errorf("%d failed requests exported, want 2", failed)
	}
	want := map[string]float64{"vllm/1": 500, "vllm/4": 500, "llama/1": 100, "llama/4": 100}
	for k, w := range want {
		v := med[k]
		slices.Sort(v)
		if len(v) == 0 || v[len(v)/2] < w*0.999 || v[len(v)/2] > w*1.001 {
			t.Errorf("median per-stream %s = %v, want %v", k, v, w)
		}
	}
	runs, err := parquet.ReadFile[export.RunRow](filepath.Join(out, "runs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// The analysis's own table: aggregate per (label, concurrency).
	js, _, err := runAnalyzeCLI(t, nil, "analyze", fast, slow, "--by", "label,concurrency", "--metrics", "aggregate_tps,per_stream_tps", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		line := r.Label + "," + map[int64]string{1: "1", 4: "4"}[r.Concurrency] + ","
		found := false
		for _, l := range strings.Split(js, "\n") {
			if strings.HasPrefix(l, line) {
				found = true
				if !strings.Contains(l, analyze.FormatNum(r.AggregateTPS, true)) {
					t.Errorf("runs %s aggregate %v not in analyze's row %q", line, r.AggregateTPS, l)
				}
			}
		}
		if !found {
			t.Errorf("no analyze row for %s in\n%s", line, js)
		}
	}
	chunks, err := parquet.ReadFile[export.ChunkRow](filepath.Join(out, "chunks.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 80 || chunks[1].TNs-chunks[0].TNs != 2e6 {
		t.Errorf("%d chunks; first gap %d ns, want 80 and 2 ms", len(chunks), chunks[1].TNs-chunks[0].TNs)
	}

	// CSV: the same columns; existing files are refused without --force.
	if _, _, err := runAnalyzeCLI(t, nil, "export", fast, "-o", out); err == nil || exitCode(err) != 2 {
		t.Errorf("export over existing files: want exit 2, got %v", err)
	}
	csvDir := filepath.Join(dir, "csv")
	if _, stderr, err := runAnalyzeCLI(t, nil, "export", fast, "--format", "csv", "-o", csvDir); err != nil {
		t.Fatalf("csv: %v\n%s", err, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(csvDir, "requests.csv"))
	if !strings.HasPrefix(string(b), "label,request_id,index,phase,") || strings.Count(string(b), "\n") != 6 {
		t.Errorf("requests.csv:\n%s", b)
	}
	if _, _, err := runAnalyzeCLI(t, nil, "export", fast, "--format", "xlsx", "-o", filepath.Join(dir, "x")); err == nil || exitCode(err) != 2 {
		t.Errorf("--format xlsx: want exit 2")
	}
}

// TestExportServerMetrics: a trace with scrapes (one of two samples, one
// failed) exports a server_metrics table through the CLI: a row per sample
// with its time, name, labels and value, and the failed scrape as a row
// with its error; a trace without scrapes leaves no such table, not even a
// stale one from an earlier export.
func TestExportServerMetrics(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "m.trace.zst")
	h := trace.Header{Label: "m", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m", StartWall: "2026-01-01T00:00:00Z",
		Phases: []trace.Phase{{Index: 0, Name: "burst-c1", Kind: "burst", Concurrency: 1, InputTokens: 100, MaxTokens: 2, Requests: 1}}}
	w, err := trace.Create(tr, h)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteScrape(&trace.Scrape{T: 1e6, Duration: 2e6, Source: trace.SourceMetrics, Target: "http://127.0.0.1:1/metrics",
		Samples: []trace.Sample{{Name: "vllm:num_requests_running", Labels: `model_name="m"`, Value: 1}, {Name: "vllm:num_requests_waiting", Labels: `model_name="m"`, Value: 3}}})
	rec := trace.Record{ID: "r0", Sent: 2e6, Done: 30e6, Status: 200, FinishReason: "length", MaxTokens: 2,
		Chunks: []trace.Chunk{{T: 10e6, Bytes: 40, Text: "1"}, {T: 20e6, Bytes: 40, Text: ","}}}
	w.Write(&rec)
	w.WriteScrape(&trace.Scrape{T: 500e6, Source: trace.SourceMetrics, Target: "http://127.0.0.1:1/metrics", Error: "HTTP 503"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runAnalyzeCLI(t, nil, "export", tr, "-o", out)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "3 server metric rows") {
		t.Errorf("stdout: %s", stdout)
	}
	rows, err := parquet.ReadFile[export.MetricRow](filepath.Join(out, "server_metrics.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Name != "vllm:num_requests_running" || rows[0].Value != 1 || rows[0].TNs != 1e6 ||
		rows[0].T.UnixNano() != time.Date(2026, 1, 1, 0, 0, 0, 1e6, time.UTC).UnixNano() || rows[1].Value != 3 || rows[1].Labels != `model_name="m"` ||
		rows[2].Error != "HTTP 503" || rows[2].Name != "" || !math.IsNaN(rows[2].Value) {
		t.Errorf("rows: %+v", rows)
	}
	// The same folder, a trace without scrapes: the old table goes.
	plain := filepath.Join(dir, "p.trace.zst")
	w, _ = trace.Create(plain, h)
	w.Write(&rec)
	w.Close()
	if _, stderr, err := runAnalyzeCLI(t, nil, "export", plain, "-o", out, "--force"); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "server_metrics.parquet")); err == nil {
		t.Errorf("a trace without scrapes left a server_metrics table")
	}
}

// TestExportReadsRequestsAsAnalyzeDoes: export's requests table takes
// each request's times, tokens and speeds from the analysis' own reading
// (what trace cat --requests prints and the tables aggregate), through the
// built binary with default flags. By hand, request r0 was sent at 1 ms;
// its stream opens with a role-only event at 5 ms (no text), carries four
// tokens at 11, 21, 31 and 41 ms, and ends with a usage-only event at 60
// ms (done 61 ms): TTFT = 11 − 1 = 10 ms (not 4, the role event), per-
// stream = (4 − 1) / (41 − 11 ms) = 100 tok/s (not 3/55 ms, the usage
// event), E2E = 60 ms, TPOT = (60 − 10) / 3 = 16.667 ms, 64 of its 120
// prompt tokens cached. r1 is the second turn of a conversation: 20 new
// tokens on a 300-token conversation, and no usage prompt count, so
// input_tokens is the whole prompt (300) and new_input_tokens the turn's
// message (20), as in trace cat --requests.
func TestExportReadsRequestsAsAnalyzeDoes(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "r.trace.zst")
	h := trace.Header{Label: "x", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m", API: "openai-chat", StartWall: "2026-01-01T00:00:00Z",
		Phases: []trace.Phase{{Index: 0, Name: "burst-c1", Kind: "burst", Concurrency: 1, InputTokens: 120, MaxTokens: 4, Requests: 2}}}
	w, err := trace.Create(tr, h)
	if err != nil {
		t.Fatal(err)
	}
	const ms = int64(1e6)
	r0 := trace.Record{ID: "r0", InputTokens: 120, MaxTokens: 4, Scheduled: ms, Sent: ms, Headers: 4 * ms, Done: 61 * ms, Status: 200, FinishReason: "length",
		Usage:  `{"prompt_tokens":120,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":64}}`,
		Chunks: []trace.Chunk{{T: 5 * ms, Bytes: 90}, {T: 11 * ms, Bytes: 60, Text: "1"}, {T: 21 * ms, Bytes: 60, Text: ","}, {T: 31 * ms, Bytes: 60, Text: " "}, {T: 41 * ms, Bytes: 60, Text: "2"}, {T: 60 * ms, Bytes: 120}}}
	r1 := trace.Record{ID: "r1", Index: 1, InputTokens: 20, SentInputTokens: 300, Session: "s1", Turn: 2, MaxTokens: 4, Scheduled: 100 * ms, Sent: 100 * ms, Headers: 101 * ms, Done: 140 * ms, Status: 200, FinishReason: "length",
		Usage:  `{"completion_tokens":4}`,
		Chunks: []trace.Chunk{{T: 110 * ms, Bytes: 60, Text: "3"}, {T: 120 * ms, Bytes: 60, Text: ","}, {T: 130 * ms, Bytes: 60, Text: " "}, {T: 139 * ms, Bytes: 60, Text: "4"}}}
	for _, r := range []*trace.Record{&r0, &r1} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tables")
	mustRun(t, bin, "export", tr, "-o", out)
	rows, err := parquet.ReadFile[export.RequestRow](filepath.Join(out, "requests.parquet"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }
	x := rows[0]
	if !near(x.TTFTMs, 10) || !near(x.PerStreamTPS, 100) || !near(x.E2EMs, 60) || !near(x.TPOTMs, 50.0/3) {
		t.Errorf("r0: ttft %v ms, per-stream %v tok/s, e2e %v ms, tpot %v ms; want 10, 100, 60, 16.667", x.TTFTMs, x.PerStreamTPS, x.E2EMs, x.TPOTMs)
	}
	if x.FirstNs != 11*ms || x.LastNs != 41*ms || x.CachedTokens != 64 || x.InputTokens != 120 || x.NewInputTokens != 120 || x.OutputTokens != 4 || x.OutputSource != "usage" {
		t.Errorf("r0: %+v", x)
	}
	y := rows[1]
	if y.InputTokens != 300 || y.NewInputTokens != 20 || y.SentInputTokens != 300 || y.CachedTokens != -1 || y.Turn != 2 {
		t.Errorf("r1: input %d, new %d, sent %d, cached %d, turn %d; want 300, 20, 300, -1, 2", y.InputTokens, y.NewInputTokens, y.SentInputTokens, y.CachedTokens, y.Turn)
	}
	// trace cat --requests says the same of each request.
	o, _ := mustRun(t, bin, "trace", "cat", "--requests", tr)
	for i, line := range strings.Split(strings.TrimSpace(o), "\n") {
		var c struct {
			TTFTS     float64 `json:"ttft_s"`
			TPOTS     float64 `json:"tpot_s"`
			E2ES      float64 `json:"e2e_s"`
			PerStream float64 `json:"per_stream_tps"`
			Input     int64   `json:"input_tokens"`
			New       int64   `json:"new_input_tokens"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		r := rows[i]
		if !near(c.TTFTS*1e3, r.TTFTMs) || !near(c.TPOTS*1e3, r.TPOTMs) || !near(c.E2ES*1e3, r.E2EMs) || !near(c.PerStream, r.PerStreamTPS) ||
			c.Input != r.InputTokens || r.Turn > 0 && c.New != r.NewInputTokens || r.Turn == 0 && c.New != 0 {
			t.Errorf("request %d: trace cat --requests %s\nexport %+v", i, line, r)
		}
	}
}
