package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/workload"
)

const goldenWorkload = "../../workload/testdata/golden-v1.workload.zst"

// runWL runs the command tree in-process.
func runWL(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestWorkloadBuildInspectCatVerify(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.workload.zst")
	out, _, err := runWL(t, "workload", "build", "--input-tokens", "100,300", "--schedule", "burst:1,2", "--repeats", "2", "--shape", "completion", "--seed", "5", "-o", file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "12 requests in 8 phases") {
		t.Fatalf("build said %q", out)
	}

	out, _, err = runWL(t, "workload", "inspect", "--json", file)
	if err != nil {
		t.Fatal(err)
	}
	var rep workload.Summary
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	wl, err := workload.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Digest != workload.Digest(wl) || rep.Requests != 12 || len(rep.Phases) != 8 || rep.Tokenizer != "o200k_base" {
		t.Fatalf("inspect --json: %+v", rep)
	}
	if h := rep.Phases[7].InputHistogram; len(h) != 1 || h[0] != (workload.Bucket{Lo: 300, Hi: 300, Count: 2}) {
		t.Fatalf("phase 7 histogram %+v", h)
	}

	out, _, err = runWL(t, "workload", "cat", file)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var r workload.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("cat line %d: %v", n+1, err)
		}
		if diff := cmp.Diff(wl.Requests[n], r); diff != "" {
			t.Fatalf("cat line %d differs:\n%s", n+1, diff)
		}
		n++
	}
	if n != 12 {
		t.Fatalf("cat printed %d lines", n)
	}

	out, _, err = runWL(t, "workload", "verify", file)
	if err != nil || !strings.Contains(out, "every count exact") {
		t.Fatalf("verify: %v, %q", err, out)
	}
	out, _, err = runWL(t, "workload", "verify", "--tokenizer", "../../workload/tokenize/testdata/qwen3/tokenizer.json.zst", file)
	if err != nil || !strings.Contains(out, "note: hf:qwen3 is not the tokenizer") {
		t.Fatalf("verify under qwen3: %v, %q", err, out)
	}
}

func TestWorkloadBuildDeterministic(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		p := filepath.Join(dir, "w.workload.zst")
		if _, _, err := runWL(t, "workload", "build", "--schedule", "rate:4", "--requests", "10", "--arrival", "gamma:2", "--seed", "9", "--force", "-o", p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("the same command wrote different bytes")
	}
}

func TestWorkloadVerifyReportsOffCounts(t *testing.T) {
	wl, err := workload.Open(goldenWorkload)
	if err != nil {
		t.Fatal(err)
	}
	wl.Requests[2].InputTokens++
	file := filepath.Join(t.TempDir(), "off.workload.zst")
	if err := workload.Create(file, wl); err != nil {
		t.Fatal(err)
	}
	out, _, err := runWL(t, "workload", "verify", file)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("want exit status 1, got %v", err)
	}
	if !strings.Contains(out, "p000-0002: 64 tokens under o200k_base, recorded 65 (-1)") || !strings.Contains(err.Error(), "1 of 6 prompts are off") {
		t.Fatalf("report %q, error %v", out, err)
	}
}

func TestWorkloadBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w.workload.zst")
	bogusJSON := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(bogusJSON, []byte(`{"model": {"type": "Unigram", "vocab": []}}`), 0o644)
	plain := filepath.Join(dir, "plain.txt")
	os.WriteFile(plain, []byte("hello"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown tokenizer", []string{"build", "--tokenizer", "gpt9_base", "-o", out}, "unknown tokenizer"},
		{"missing tokenizer.json", []string{"build", "--tokenizer", filepath.Join(dir, "none.json"), "-o", out}, "none.json"},
		{"non-BPE tokenizer.json", []string{"build", "--tokenizer", bogusJSON, "-o", out}, "Unigram"},
		{"too small", []string{"build", "--input-tokens", "20", "-o", out}, "use at least"},
		{"negative", []string{"build", "--input-tokens", "-800", "-o", out}, "--input-tokens -800 is not an input length"},
		{"absurd", []string{"build", "--input-tokens", "999999999", "-o", out}, "--input-tokens 999999999 is not an input length"},
		{"zero max tokens", []string{"build", "--max-tokens", "0", "-o", out}, "bad --max-tokens 0"},
		// Negative values are BuildConfig's check alone; the CLI names the flag.
		{"negative max tokens", []string{"build", "--max-tokens", "-3", "-o", out}, "--max-tokens -3 is out of range"},
		{"negative repeats", []string{"build", "--repeats", "-1", "-o", out}, "--repeats -1 is out of range"},
		{"negative requests", []string{"build", "--schedule", "closed:2", "--requests", "-2", "-o", out}, "--requests -2 is out of range"},
		{"negative time scale", []string{"build", "--schedule", "trace:x.csv", "--time-scale", "-1", "-o", out}, "--time-scale -1 is out of range"},
		{"bad shape", []string{"build", "--shape", "poem", "-o", out}, "--shape \"poem\" is not a shape"},
		{"bad schedule", []string{"build", "--schedule", "burst:-1", "-o", out}, "concurrency level"},
		{"negative salt", []string{"build", "--salt-words", "-1", "-o", out}, "--salt-words"},
		{"zero time scale", []string{"build", "--schedule", "trace:x.csv", "--time-scale", "0", "-o", out}, "bad --time-scale 0"},
		{"time scale without trace", []string{"build", "--time-scale", "2", "-o", out}, "--time-scale applies"},
		{"lengths with trace", []string{"build", "--schedule", "trace:../../workload/testdata/traces/azure.csv", "--input-tokens", "800", "-o", out}, "--input-tokens does not apply"},
		{"missing log", []string{"build", "--schedule", "trace:" + filepath.Join(dir, "none.csv"), "-o", out}, "cannot read the request log"},
		{"shared too short", []string{"build", "--prefix", "shared:3", "-o", out}, "shorter than"},
		{"missing folder", []string{"build", "-o", filepath.Join(dir, "no", "w.workload.zst")}, "does not exist"},
		{"no output", []string{"build"}, "-o"},
		{"not a number", []string{"build", "--input-tokens", "lots", "-o", out}, `--input-tokens "lots" is not a list of whole numbers`},
		{"inspect plain file", []string{"inspect", plain}, "not zstd-compressed"},
		{"inspect missing", []string{"inspect", filepath.Join(dir, "none.zst")}, "cannot open workload"},
		{"verify empty stdin", []string{"verify", "-"}, "stdin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runWL(t, append([]string{"workload"}, tc.args...)...)
			if err == nil || exitCode(err) != 2 {
				t.Fatalf("want exit status 2, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line containing %q, got %q", tc.want, err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "tokenizer.json" && e.Name() != "plain.txt" {
					t.Fatalf("bad input left %s behind", e.Name())
				}
			}
		})
	}
}

// TestRememberedTokenizer: a workload built with a tokenizer.json records
// its path and digest; verify finds it again without --tokenizer and says
// which file it used; when the file is gone it says so (exit 2) and
// --tokenizer still works.
func TestRememberedTokenizer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.workload.zst")
	src, err := os.ReadFile("../../workload/tokenize/testdata/qwen3/tokenizer.json.zst")
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "qwen3"), 0o755) // the tokenizer is named after its folder
	qwen := filepath.Join(dir, "qwen3", "tokenizer.json.zst")
	os.WriteFile(qwen, src, 0o644)
	if _, _, err := runWL(t, "workload", "build", "--tokenizer", qwen, "--schedule", "burst:2", "--repeats", "1", "-o", file); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runWL(t, "workload", "verify", file)
	if err != nil || !strings.Contains(out, "verified 2 prompts under hf:qwen3: every count exact") || !strings.Contains(errOut, "tokenizer: "+qwen+" (recorded in the workload)") {
		t.Fatalf("verify with the recorded tokenizer: %v %q %q", err, out, errOut)
	}
	// A trace replayed from it records the same, and analyze counts the
	// received text with that tokenizer, saying so.
	srv := httptest.NewServer(&pacedServer{tokens: 3, gap: time.Millisecond})
	defer srv.Close()
	tr := filepath.Join(dir, "q.trace.zst")
	if _, e, err := runWL(t, "replay", file, "--url", srv.URL, "--model", "m", "-o", tr); err != nil {
		t.Fatalf("replay: %v %s", err, e)
	}
	out, errOut, err = runWL(t, "analyze", "--format", "json", tr)
	if err != nil || !strings.Contains(errOut, "tokenizer: "+qwen+" (recorded in "+tr+")") || strings.Contains(out, "tokenizer_unavailable") || !strings.Contains(out, `"tokenizer_file": "`+qwen+`"`) {
		t.Fatalf("analyze with the recorded tokenizer: %v\n%s\n%s", err, errOut, out)
	}
	// check reads its traces the same way and says so too, whatever its
	// verdict on two samples (only bad input would be exit 2).
	_, errOut, err = runWL(t, "check", "--claim", "ttft_p50 <= 100000", tr)
	if (err != nil && exitCode(err) == 2) || !strings.Contains(errOut, "tokenizer: "+qwen+" (recorded in "+tr+")") {
		t.Fatalf("check with the recorded tokenizer: %v\n%s", err, errOut)
	}
	// replay --send-token-ids takes the ids from the recorded tokenizer and
	// says which file it used (the paced server answers in chat deltas, so
	// only the start of the run is checked here, not its records).
	cfile := filepath.Join(dir, "c.workload.zst")
	if _, _, err := runWL(t, "workload", "build", "--tokenizer", qwen, "--shape", "completion", "--schedule", "burst:1", "--repeats", "1", "-o", cfile); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = runWL(t, "replay", cfile, "--url", srv.URL, "--model", "m", "--api", "openai-completions", "--send-token-ids", "-o", filepath.Join(dir, "c.trace.zst"))
	if (err != nil && exitCode(err) == 2) || !strings.Contains(errOut, "tokenizer: "+qwen+" (recorded in the workload)") {
		t.Fatalf("replay --send-token-ids with the recorded tokenizer: %v\n%s", err, errOut)
	}
	moved := filepath.Join(dir, "moved", "qwen3", "tokenizer.json.zst")
	os.MkdirAll(filepath.Dir(moved), 0o755)
	os.Rename(qwen, moved)
	_, _, err = runWL(t, "workload", "verify", file)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "which is gone: give it (--tokenizer PATH)") {
		t.Fatalf("want exit 2 saying the recorded tokenizer is gone, got %v", err)
	}
	out, _, err = runWL(t, "workload", "verify", "--tokenizer", moved, file)
	if err != nil || !strings.Contains(out, "verified 2 prompts under hf:qwen3: every count exact") || strings.Contains(out, "note:") {
		t.Fatalf("verify: %v %q", err, out)
	}
	// analyze falls back as before (chunk counts) and says why, in its
	// tokenizer warning; --tokenizer points it at the moved file.
	out, _, err = runWL(t, "analyze", "--format", "json", tr)
	if err != nil || !strings.Contains(out, "tokenizer_unavailable") || !strings.Contains(out, "which is gone") {
		t.Fatalf("analyze with the recorded tokenizer gone: %v\n%s", err, out)
	}
	out, errOut, err = runWL(t, "analyze", "--format", "json", "--tokenizer", moved, tr)
	if err != nil || strings.Contains(out, "tokenizer_unavailable") {
		t.Fatalf("analyze --tokenizer: %v\n%s\n%s", err, errOut, out)
	}
	// Another tokenizer.json at the recorded path is refused by digest.
	other, err := os.ReadFile("../../workload/tokenize/testdata/deepseek_v3/tokenizer.json.zst")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(qwen, other, 0o644)
	_, _, err = runWL(t, "workload", "verify", file)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "has changed since") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want exit 2 saying the recorded tokenizer changed, got %v", err)
	}
}

func TestWorkloadHelpHasExamples(t *testing.T) {
	root := NewRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	wl, _, err := root.Find([]string{"workload"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(wl.Commands(), wl) {
		if !strings.Contains(c.Example, "llmreplay workload") {
			t.Errorf("%s has no runnable example", c.CommandPath())
		}
	}
}

func TestWorkloadBuildFromTrace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.workload.zst")
	if _, _, err := runWL(t, "workload", "build", "--schedule", "trace:../../workload/testdata/traces/burstgpt.csv", "--window", "100:", "--time-scale", "0.5", "-o", file); err != nil {
		t.Fatal(err)
	}
	out, _, err := runWL(t, "workload", "inspect", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"schedule:   trace:burstgpt.csv, time scale 0.5, window 100:", "2 failed request(s) (0 response tokens) skipped", "trace-burstgpt-r1", "28.000 s"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}
