//go:build unix

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestReplaySaysDispatcherPolicy: replay with default flags says once, on
// stderr, which scheduling policy its dispatcher thread got (whatever this
// machine permits: the test holds no privilege either way), and the trace
// header records the same one, which trace info shows; with
// --normal-priority both say SCHED_OTHER.
func TestReplaySaysDispatcherPolicy(t *testing.T) {
	bin := parallelBinary(t)
	simURL := startSim(t, bin, "--profile", "fast")
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "rate:50", "--arrival", "constant", "--requests", "4", "--repeats", "1")
	tr := filepath.Join(dir, "p.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "-o", tr)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, e)
	}
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
	_, e, code = run(t, nil, bin, "replay", wl, "--url", simURL, "--normal-priority", "-o", tr2)
	if code != 0 || !regexp.MustCompile(`(?m)^dispatcher thread: SCHED_OTHER$`).MatchString(e) {
		t.Fatalf("replay --normal-priority: exit %d, want the line 'dispatcher thread: SCHED_OTHER':\n%s", code, e)
	}
	if got := traceHeader(t, tr2).Options[trace.OptDispatcherPolicy]; got != "SCHED_OTHER" {
		t.Errorf("--normal-priority's trace records %q, want SCHED_OTHER", got)
	}
}

// traceHeader is the header of the trace at path.
func traceHeader(t *testing.T, path string) trace.Header {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Header()
}
