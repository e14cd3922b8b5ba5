//go:build unix

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// What replay says on stderr while it runs: the dispatcher's scheduling
// policy, and plain progress lines when stderr is not a terminal.

// TestReplaySaysDispatcherPolicy: replay with default flags says once, on
// stderr, which scheduling policy its dispatcher thread got (whatever this
// machine permits: the test holds no privilege either way), and the trace
// header records the same one, which trace info shows; with
// --normal-priority both say SCHED_OTHER.
func TestReplaySaysDispatcherPolicy(t *testing.T) {
	bin := parallelBinary(t)
	simURL, dir, wl := simWorkload(t, bin, []string{"--profile", "fast"}, "--max-tokens", "4", "--schedule", "rate:50", "--arrival", "constant", "--requests", "4", "--repeats", "1")
	tr := filepath.Join(dir, "p.trace.zst")
	_, e := mustRun(t, bin, "replay", wl, "--url", simURL, "-o", tr)
	lines := regexp.MustCompile(`(?m)^dispatcher thread: (SCHED_FIFO|SCHED_RR|nice -20|SCHED_OTHER)\b.*$`).FindAllStringSubmatch(e, -1)
	if len(lines) != 1 {
		t.Fatalf("want one dispatcher line on stderr, got %d:\n%s", len(lines), e)
	}
	policy := lines[0][1]
	if got := traceHeader(t, tr).Options[trace.OptDispatcherPolicy]; got != policy {
		t.Errorf("trace header dispatcher_policy %q, stderr said %q", got, policy)
	}
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	if !strings.Contains(info, "dispatcher_policy="+policy) {
		t.Errorf("trace info does not show the dispatcher's policy %q:\n%s", policy, info)
	}
	// --normal-priority asks for nothing: the line and the trace say so.
	tr2 := filepath.Join(dir, "n.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "--normal-priority", "-o", tr2)
	if code != 0 || !regexp.MustCompile(`(?m)^dispatcher thread: SCHED_OTHER$`).MatchString(e) {
		t.Fatalf("replay --normal-priority: exit %d, want the line 'dispatcher thread: SCHED_OTHER':\n%s", code, e)
	}
	if got := traceHeader(t, tr2).Options[trace.OptDispatcherPolicy]; got != "SCHED_OTHER" {
		t.Errorf("--normal-priority's trace records %q, want SCHED_OTHER", got)
	}
}

// With stderr not a terminal (the mode tests can see) the progress display
// writes plain lines, one per phase with its own counts (failures included),
// and -q silences it but not the summary.
func TestProgressPlainLinesThroughTheBinary(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	_, e, code := run(t, nil, bin, "bench", "--concurrency", "1,2", "--input-tokens", "64", "--max-tokens", "4", "--repeats", "1", "--results", filepath.Join(dir, "res"))
	if code != 0 {
		t.Fatalf("bench exit %d: %s", code, e)
	}
	for _, re := range []string{
		`(?m)^phase 1/2 burst-c1-in64-r1: 1 of 1 done, 0 failed, [0-9.]+ tok/s in \S+$`,
		`(?m)^phase 2/2 burst-c2-in64-r1: 2 of 2 done, 0 failed, [0-9.]+ tok/s in \S+$`,
	} {
		if !regexp.MustCompile(re).MatchString(e) {
			t.Errorf("bench stderr lacks %s:\n%s", re, e)
		}
	}
	if strings.Contains(e, "\x1b[") {
		t.Errorf("terminal escapes in a non-terminal's output:\n%q", e)
	}

	// Every request fails: the line counts them.
	simURL := startSim(t, bin, "--error-rate", "1")
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:3", "--repeats", "1")
	_, e, _ = run(t, nil, bin, "replay", wl, "--url", simURL, "-o", filepath.Join(dir, "f.trace.zst"))
	if !regexp.MustCompile(`(?m)^phase 1/1 burst-c3-in64-r1: 3 of 3 done, 3 failed, `).MatchString(e) {
		t.Errorf("replay stderr lacks the failed count:\n%s", e)
	}

	// -q: no progress, the summary still.
	_, e, _ = run(t, nil, bin, "replay", wl, "--url", simURL, "-q", "-o", filepath.Join(dir, "q.trace.zst"))
	if strings.Contains(e, "phase 1/1") || !strings.Contains(e, "3 requests sent, 0 ok, 3 failed") {
		t.Errorf("replay -q stderr:\n%s", e)
	}
	_, e, code = run(t, nil, bin, "bench", "-q", "--concurrency", "1", "--input-tokens", "64", "--max-tokens", "4", "--repeats", "1", "--results", filepath.Join(dir, "res"))
	if code != 0 || strings.Contains(e, "phase 1/1") || !strings.Contains(e, "1 requests sent, 1 ok") {
		t.Errorf("bench -q: exit %d, stderr:\n%s", code, e)
	}
}
