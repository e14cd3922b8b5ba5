package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites every golden file of this package from the current output
// (the same flag name as in every other package of the module).
var update = flag.Bool("update", false, "rewrite the golden files (testdata/*.golden, traces/samples/*.golden) from the current output")

const goldenTrace = "../../traces/v1/golden-1.0.trace.zst"

// runCLI runs the command tree in-process.
func runCLI(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetIn(bytes.NewReader(stdin))
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestTrace -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

// TestTraceCatRequests on the golden trace of format 1.0: one metrics
// line per record, every line valid JSON with the documented fields
// (docs/METRICS.md, "Per-request rows"; the hand-computed values are in
// TestTraceCatRequests through the binary).
func TestTraceCatRequestsGolden(t *testing.T) {
	out, errOut, err := runCLI(t, nil, "trace", "cat", "--requests", goldenTrace)
	if err != nil || errOut != "" {
		t.Fatalf("err %v, stderr %q", err, errOut)
	}
	checkGolden(t, "trace-cat-requests.golden", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines for the golden trace's 7 records", len(lines))
	}
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"label", "id", "index", "phase", "concurrency", "ok", "ttft_s", "e2e_s", "input_tokens", "output_tokens", "per_stream_tps"} {
			if _, ok := m[k]; !ok {
				t.Errorf("no %s: %s", k, line)
			}
		}
	}
}

func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	notTrace := filepath.Join(dir, "notes.txt")
	os.WriteFile(notTrace, []byte("hello\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"trace"}, "needs a subcommand"},
		{"unknown subcommand", []string{"trace", "show", "x"}, "unknown trace subcommand"},
		{"no file", []string{"trace", "info"}, "name a trace file"},
		{"missing file", []string{"trace", "cat", filepath.Join(dir, "nope.trace.zst")}, "no such file"},
		{"not a trace", []string{"trace", "info", notTrace}, "not an llmreplay trace"},
		{"bad flag", []string{"trace", "cat", "--chunks=no", goldenTrace}, "unknown flag"},
		{"requests and no-chunks", []string{"trace", "cat", "--requests", "--no-chunks", goldenTrace}, "give one"},
		{"definitions without requests", []string{"trace", "cat", "--definitions", "vllm", goldenTrace}, "--requests only"},
		{"unknown definitions", []string{"trace", "cat", "--requests", "--definitions", "nope", goldenTrace}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCLI(t, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit status %d, want 2 for bad input", code)
			}
		})
	}
}
