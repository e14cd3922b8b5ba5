package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
)

func runAnalyzeCLI(t *testing.T, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetIn(bytes.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

// writeAnalyzeTrace writes a trace in which every request streams n
// one-token chunks ("1", ",", "1", … o200k counts each as one token) step
// ms apart after ttft ms: per-stream speed = (n−1)/((n−1)·step) =
// 1000/step tok/s exactly.
func writeAnalyzeTrace(t *testing.T, path, label string, step float64, concurrencies ...int) {
	t.Helper()
	const n, ttft = 8, 50.0
	h := trace.Header{Label: label, Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m"}
	for i, c := range concurrencies {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("burst-c%d", c), Kind: "burst", Concurrency: c, InputTokens: 800, MaxTokens: n, Requests: c})
	}
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	start := 1.0
	for i, c := range concurrencies {
		for j := 0; j < c; j++ {
			rec := trace.Record{ID: fmt.Sprintf("p%d-%d", i, j), Phase: i, InputTokens: 800, MaxTokens: n,
				Scheduled: int64(start * 1e6), Sent: int64(start * 1e6), Status: 200, FinishReason: "length",
				Usage: fmt.Sprintf(`{"completion_tokens":%d,"prompt_tokens":800}`, n)}
			countUpChunks(&rec, n, start, ttft, step)
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		start += 1000
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// countUpChunks gives rec n one-token chunks, "1" and "," in turn, the
// first ttft ms after start and the rest step ms apart, and ends the
// request 1 ms after the last.
func countUpChunks(rec *trace.Record, n int, start, ttft, step float64) {
	for k := range n {
		text := "1"
		if k%2 == 1 {
			text = ","
		}
		rec.Chunks = append(rec.Chunks, trace.Chunk{T: int64((start + ttft + float64(k)*step) * 1e6), Bytes: 60, Text: text})
	}
	rec.Done = rec.Chunks[n-1].T + 1e6
}

func analyzeFixtures(t *testing.T) (fast, slow string) {
	dir := t.TempDir()
	fast, slow = filepath.Join(dir, "fast.trace.zst"), filepath.Join(dir, "slow.trace.zst")
	writeAnalyzeTrace(t, fast, "vllm", 2, 1, 4)   // 500 tok/s per stream
	writeAnalyzeTrace(t, slow, "llama", 10, 1, 4) // 100 tok/s per stream
	return fast, slow
}

func TestAnalyzeSeedTable(t *testing.T) {
	fast, slow := analyzeFixtures(t)
	out, _, err := runAnalyzeCLI(t, nil, "analyze", "--wide", "q4="+slow, fast)
	if err != nil {
		t.Fatal(err)
	}
	// Labels: q4 from name=path, vllm from the header. Per stream 100 and
	// 500 tok/s; at concurrency 1 aggregate = 8 tokens / (last token − send
	// = 50+7·step ms): 8/0.120 = 66.7 and 8/0.064 = 125; at 4, four times
	// that. Four samples each side separate fully: U-test p = 2/70 = 0.029
	// (normal approximation with ties: 0.013), so the Δ is significant.
	for _, want := range []string{"concurrency", "q4", "vllm", "100.0 / 66.7", "500 / 125", "100.0 / 267", "500 / 500", "+400.0%", "Δ per-stream"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyzeFormats(t *testing.T) {
	fast, slow := analyzeFixtures(t)
	out, stderr, err := runAnalyzeCLI(t, nil, "analyze", fast, slow, "--format", "json", "--definitions", "vllm")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema      string          `json:"schema"`
		Version     int             `json:"version"`
		Definitions string          `json:"definitions"`
		Groups      []analyzedGroup `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if doc.Schema != analyze.SchemaName || doc.Version != 2 || doc.Definitions != "vllm" || len(doc.Groups) != 4 {
		t.Errorf("doc %+v", doc)
	}
	// The stopped-early check is quiet (8 of 8 tokens), so no warning lines.
	if stderr != "" {
		t.Errorf("unexpected stderr %q", stderr)
	}

	out, _, err = runAnalyzeCLI(t, nil, "analyze", fast, "--format", "csv", "--by", "concurrency", "--metrics", "per_stream_tps,ttft_p50")
	if err != nil || !strings.HasPrefix(out, "label,concurrency,per_stream_tps,per_stream_tps_lo") {
		t.Errorf("csv: %v\n%s", err, out)
	}
	out, _, err = runAnalyzeCLI(t, nil, "analyze", fast, "--format", "markdown", "--by", "label", "--metrics", "aggregate_tps")
	if err != nil || !strings.Contains(out, "| label | aggregate_tps |") {
		t.Errorf("markdown: %v\n%s", err, out)
	}
	// stdin
	data, _ := os.ReadFile(fast)
	out, _, err = runAnalyzeCLI(t, data, "analyze", "piped=-")
	if err != nil || !strings.Contains(out, "piped") {
		t.Errorf("stdin: %v\n%s", err, out)
	}
}

func TestAnalyzeCSVWarningsToStderr(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "short.trace.zst")
	h := trace.Header{Label: "s", Tokenizer: "o200k_base", Phases: []trace.Phase{{Index: 0, Name: "c1", Concurrency: 1, MaxTokens: 100}}}
	w, err := trace.Create(p, h)
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.Record{ID: "r", Phase: 0, MaxTokens: 100, Sent: 1e6, Done: 30e6, Status: 200,
		Chunks: []trace.Chunk{{T: 10e6, Text: "1"}, {T: 20e6, Text: ","}}}
	if err := w.Write(&rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out, stderr, err := runAnalyzeCLI(t, nil, "analyze", p, "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "stopped_early") || strings.Contains(out, "stopped_early") {
		t.Errorf("warnings belong on stderr only:\nstdout %s\nstderr %s", out, stderr)
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	fast, _ := analyzeFixtures(t)
	cases := [][]string{
		{"analyze"},
		{"analyze", fast, "--format", "xml"},
		{"analyze", fast, "--by", "color"},
		{"analyze", fast, "--metrics", "nope"},
		{"analyze", fast, "--definitions", "nope"},
		{"analyze", fast, "--slo", "ttft"},
		{"analyze", filepath.Join(t.TempDir(), "missing.trace.zst")},
		{"check", fast},
		{"check", fast, "--claim", "nope >= 1"},
		{"check", fast, "--claims", "/nonexistent.claims"},
	}
	for _, args := range cases {
		_, _, err := runAnalyzeCLI(t, nil, args...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want exit 2", args, err, exitCode(err))
		}
	}
}

func TestCheckExitCodes(t *testing.T) {
	fast, _ := analyzeFixtures(t)
	// Concurrency 4: four requests at exactly 500 tok/s: the median's 95%
	// interval needs 6 samples, so with --min-samples 4 it is [−∞, +∞]
	// → inconclusive; the per-stream minimum is exact.
	cases := []struct {
		claims []string
		code   int
	}{
		{[]string{"per_stream_tps_min{concurrency=4} >= 490", "requests_failed == 0"}, 0},
		{[]string{"per_stream_tps_min{concurrency=4} >= 490", "per_stream_tps_max{concurrency=4} >= 600"}, exitClaimFails},
		{[]string{"per_stream_tps{concurrency=4} >= 490"}, exitInconclusive},
	}
	for _, c := range cases {
		args := []string{"check", fast, "--min-samples", "4"}
		for _, cl := range c.claims {
			args = append(args, "--claim", cl)
		}
		out, _, err := runAnalyzeCLI(t, nil, args...)
		got := 0
		if err != nil {
			got = exitCode(err)
		}
		if got != c.code {
			t.Errorf("%v: exit %d (%v), want %d\n%s", c.claims, got, err, c.code, out)
		}
	}
	file := filepath.Join(t.TempDir(), "x.claims")
	os.WriteFile(file, []byte("# from a README\nrequests_ok{concurrency=1} == 1 # single stream\n"), 0o644)
	out, _, err := runAnalyzeCLI(t, nil, "check", fast, "--claims", file, "--format", "json")
	if err != nil || !strings.Contains(out, `"verdict": "holds"`) {
		t.Errorf("claims file: %v\n%s", err, out)
	}
}
