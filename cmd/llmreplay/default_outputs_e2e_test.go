package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// What a run leaves by default: the trace under results/ with a
// timestamped name, and the summary on stdout.

// TestDefaultTraceName: replay without -o writes the trace where its help
// says, results/LABEL-TIME.trace.zst, and says so; run as a user does, the
// built binary in a fresh folder with default flags.
func TestDefaultTraceName(t *testing.T) {
	bin := parallelBinary(t)
	url, dir, wl := simWorkload(t, bin, []string{"--profile", "fast"}, "--schedule", "burst:1", "--repeats", "1", "--input-tokens", "100", "--max-tokens", "4")
	_, stderr, code := runIn(t, dir, bin, "replay", wl, "--url", url, "--label", "my run")
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, stderr)
	}
	// The help: "(default results/LABEL-TIME.trace.zst)"; the label made
	// safe for file names, the time in UTC as 20060102T150405Z.
	re := regexp.MustCompile(`results/my-run-\d{8}T\d{6}Z\.trace\.zst`)
	name := re.FindString(stderr)
	if name == "" {
		t.Fatalf("replay did not name results/my-run-TIME.trace.zst:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("the trace it named is not there: %v", err)
	}
	help, _, code := run(t, nil, bin, "replay", "--help")
	if code != 0 || !strings.Contains(help, "(default results/LABEL-TIME.trace.zst)") {
		t.Errorf("replay --help no longer states the default name: exit %d", code)
	}
}

// TestSummaryAfterEveryRun, through the built binary with default flags:
// replay prints on stdout the summary analyze prints of its trace (its
// counts and the trace's path stay on stderr), nothing when the trace went
// to a device; analyze prints the summary by default, the old wide table
// with --wide (or --format table); bench --wide prints the wide table.
// Every summary line fits 100 columns.
func TestSummaryAfterEveryRun(t *testing.T) {
	bin := parallelBinary(t)
	// A paced profile: the fast one writes a whole answer at once, so the
	// client reads its chunks together and ITL rightly has no sample. At
	// the profile's own pace (8 tokens in ~70 ms) a loaded machine held
	// the client up past a whole answer and read it in one piece too: the
	// chunks come at least 100 ms apart, so a stall of a few hundred ms
	// still leaves gaps to measure.
	url, dir, wl := simWorkload(t, bin, []string{"--profile", "vllm-rtx5090-bf16", "--token-interval", "100ms"}, "--max-tokens", "8", "--schedule", "burst:1,2", "--repeats", "1")
	tr := filepath.Join(dir, "run.trace.zst")
	out, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", tr)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, e)
	}
	if !strings.HasPrefix(out, "summary (definitions: llmreplay)\n") || !strings.Contains(e, "3 requests sent, 3 ok, 0 failed") || !strings.Contains(e, "trace: "+tr) {
		t.Errorf("replay: want the summary on stdout, the counts and path on stderr:\n%s\n--- stderr\n%s", out, e)
	}
	for _, block := range []string{"vllm-rtx5090-bf16 · concurrency 1 · 1 request ok · 1 run\n", "vllm-rtx5090-bf16 · concurrency 2 · 2 requests ok · 1 run\n"} {
		if !strings.Contains(out, block) {
			t.Errorf("replay's summary lacks %q:\n%s", block, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  ms +p50 +p90 +p95 +p99\n  TTFT( +[0-9.]+){4}\n  TPOT( +[0-9.]+){4}\n  ITL( +[0-9.]+){4}\n  E2E( +[0-9.]+){4}$`).MatchString(out) {
		t.Errorf("replay's summary has no latency percentiles:\n%s", out)
	}
	checkWidth(t, "replay", out)
	an, e, code := run(t, nil, bin, "analyze", tr)
	if code != 0 || an != out {
		t.Errorf("analyze (exit %d) prints another summary than replay did:\n%s\n--- replay\n%s%s", code, an, out, e)
	}
	if out, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", os.DevNull); code != 0 || out != "" {
		t.Errorf("replay -o %s: exit %d, stdout %q (want none: the trace is not kept)\n%s", os.DevNull, code, out, e)
	}

	// The wide table, as before the summary: by --wide or --format table.
	wide, e, code := run(t, nil, bin, "analyze", "--wide", tr)
	if code != 0 || !strings.HasPrefix(wide, "per-stream / aggregate output tok/s (definitions: llmreplay)\nconcurrency ") {
		t.Errorf("analyze --wide: exit %d\n%s%s", code, wide, e)
	}
	if table, _, _ := run(t, nil, bin, "analyze", "--format", "table", tr); table != wide {
		t.Errorf("--format table is not --wide:\n%s", table)
	}
	if _, e, code := run(t, nil, bin, "analyze", "--wide", "--format", "json", tr); code != 2 || strings.Count(e, "\n") != 1 || !strings.Contains(e, "--wide") {
		t.Errorf("--wide with --format json: exit %d, %q; want 2 and one line naming --wide", code, e)
	}

	// bench --wide: the sweep table instead of the summary (the server
	// column's own test is TestBenchShowsServerState).
	res := filepath.Join(dir, "results")
	out, e, code = run(t, nil, bin, "bench", "--wide", "--profile", "fast", "--concurrency", "1,2", "--input-tokens", "64", "--max-tokens", "8", "--repeats", "1", "--results", res)
	if code != 0 || !strings.HasPrefix(out, "server: SIMULATED (profile fast)\nper-stream / aggregate output tok/s (definitions: llmreplay)\nconcurrency ") || !strings.Contains(out, "sim fast TTFT p50 ms") || strings.Contains(out, "summary (") {
		t.Errorf("bench --wide: exit %d\n%s%s", code, out, e)
	}
}

func checkWidth(t *testing.T, what, out string) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("%s: line %d is %d columns wide: %q", what, i+1, n, l)
		}
	}
}

// unwrapped joins the summary's wrapped lines (a continuation starts with
// four spaces or more) back into one, so a test can look for a note's
// words wherever the 100-column wrap fell.
func unwrapped(s string) string {
	return regexp.MustCompile(`\n {4,}`).ReplaceAllString(s, " ")
}
