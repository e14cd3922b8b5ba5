package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/llmreplay/llmreplay/export"
	"github.com/llmreplay/llmreplay/trace"
)

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
	if _, e, code := run(t, nil, bin, "export", tr, "-o", out); code != 0 {
		t.Fatal(e)
	}
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
	o, e, code := run(t, nil, bin, "trace", "cat", "--requests", tr)
	if code != 0 {
		t.Fatal(e)
	}
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
