//go:build unix

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 12 item 11: `replay --duration` bounds each open-loop phase in
// time, and the trace is a whole time-bounded run, not a partial one;
// `analyze --by rate` shows rate phases by their rate.
func TestReplayDurationAndByRate(t *testing.T) {
	bin := parallelBinary(t)
	simURL := startSim(t, bin, "--profile", "fast")
	dir := t.TempDir()
	// Constant arrivals, 6 requests per phase: rate 2 is due at 0, 0.5,
	// 1.0, 1.5, 2.0, 2.5 s and rate 5 at 0, 0.2, 0.4, 0.6, 0.8, 1.0 s.
	// Bounded at 1 s (due before it): 2 + 5 = 7 of the 12 are sent.
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4",
		"--schedule", "rate:2,5", "--arrival", "constant", "--requests", "6", "--repeats", "1")
	tr := filepath.Join(dir, "d.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "--duration", "1s", "-o", tr)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, e)
	}
	if !strings.Contains(e, "duration: 1s bounds each rate or trace phase: 7 of 12 requests are due within it, 5 later ones are not sent") ||
		!strings.Contains(e, "7 requests sent, 7 ok, 0 failed") || strings.Contains(e, "not sent (stopped)") {
		t.Errorf("replay stderr:\n%s", e)
	}
	h := traceHeader(t, tr)
	if h.Options["duration"] != "1s" || len(h.Phases) != 2 || h.Phases[0].Requests != 2 || h.Phases[1].Requests != 5 {
		t.Errorf("trace header: duration %q, phases %+v; want 1s and 2, 5 requests planned", h.Options["duration"], h.Phases)
	}
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	if !strings.Contains(info, "duration=1s") || strings.Contains(info, "stopped") {
		t.Errorf("trace info does not say the run was time-bounded, or calls it stopped:\n%s", info)
	}
	// A time-bounded run is whole: no partial_trace warning, and a claim
	// over it gets a verdict without --accept-partial.
	out, e, code := run(t, nil, bin, "analyze", tr, "--by", "rate", "--metrics", "requests_ok,requests_failed", "--format", "csv")
	if code != 0 {
		t.Fatalf("analyze exit %d: %s", code, e)
	}
	if strings.Contains(out+e, "partial_trace") || strings.Contains(out+e, "never sent") {
		t.Errorf("a time-bounded run is reported as partial:\n%s\n%s", out, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "label,rate,requests_ok") ||
		!strings.Contains(lines[1], ",2,2,") || !strings.Contains(lines[2], ",5,5,") {
		t.Errorf("analyze --by rate: want one row per rate (2: 2 ok, 5: 5 ok):\n%s", out)
	}
	// Without --by a rate sweep is shown by rate, not pooled into one
	// "concurrency 0" row.
	out, e, code = run(t, nil, bin, "analyze", tr)
	if code != 0 || !regexp.MustCompile(`(?m)^\S.* · 2 requests/s · 2 requests ok · 1 run$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\S.* · 5 requests/s · 5 requests ok · 1 run$`).MatchString(out) || strings.Contains(out, "concurrency") {
		t.Errorf("analyze of a rate sweep without --by: exit %d\n%s\n%s", code, out, e)
	}
	out, e, code = run(t, nil, bin, "analyze", "--wide", tr)
	if code != 0 || !regexp.MustCompile(`(?m)^label\s+rate\s+requests_ok`).MatchString(out) || strings.Contains(out, "concurrency") {
		t.Errorf("analyze --wide of a rate sweep without --by: exit %d\n%s\n%s", code, out, e)
	}
	out, e, code = run(t, nil, bin, "check", tr, "--claim", "requests_failed{rate=5} == 0")
	if code != 0 || !strings.Contains(out, "HOLDS") {
		t.Errorf("check over a time-bounded run: exit %d\n%s\n%s", code, out, e)
	}
	// --duration bounds open-loop phases only: a burst workload is bad input.
	burst := filepath.Join(dir, "b")
	wb := buildWorkload(t, bin, t.TempDir(), "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	_, e, code = run(t, nil, bin, "replay", wb, "--url", simURL, "--duration", "1s", "-o", burst+".trace.zst")
	if code != 2 || !strings.Contains(e, "--duration bounds rate and trace phases, and this workload has none") {
		t.Errorf("--duration on a burst workload: exit %d, %s", code, e)
	}
}
