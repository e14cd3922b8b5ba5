package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// TestRateSweepWorkload: `workload build --schedule rate:1,2,5` is a rate
// sweep, one open-loop phase per rate, each with its own exact constant
// offsets; a bad rate in the list is exit 2 naming it.
func TestRateSweepWorkload(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rates.workload.zst")
	if _, stderr, err := runCLI(t, nil, "workload", "build", "--schedule", "rate:1,2,5", "--arrival", "constant", "--requests", "3", "-o", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	wl, err := workload.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	// Default input lengths × 3 rates × default repeats phases; check the
	// rates in order for the first input length and repeat 1.
	var rates []float64
	for _, ph := range wl.Header.Phases {
		if ph.Kind != workload.KindRate {
			t.Fatalf("phase %s is %s, want rate", ph.Name, ph.Kind)
		}
		if ph.Repeat == 1 && ph.InputTokens == wl.Header.Phases[0].InputTokens {
			rates = append(rates, ph.Rate)
		}
	}
	if len(rates) != 3 || rates[0] != 1 || rates[1] != 2 || rates[2] != 5 {
		t.Fatalf("phase rates %v, want [1 2 5]", rates)
	}
	if wl.Header.Schedule.Rate != 0 || wl.Header.Schedule.Spec != "rate:1,2,5" {
		t.Errorf("schedule header %+v: a sweep has no single rate and keeps its spec", wl.Header.Schedule)
	}
	// constant arrivals: offsets round(i·10⁹/R): rate 2 → 0, 500 ms, 1 s;
	// rate 5 → 0, 200 ms, 400 ms.
	want := map[float64][]int64{1: {0, 1e9, 2e9}, 2: {0, 5e8, 1e9}, 5: {0, 2e8, 4e8}}
	got := map[int][]int64{}
	for _, r := range wl.Requests {
		got[r.Phase] = append(got[r.Phase], r.Offset)
	}
	for _, ph := range wl.Header.Phases {
		w := want[ph.Rate]
		g := got[ph.Index]
		if len(g) != 3 || g[0] != w[0] || g[1] != w[1] || g[2] != w[2] {
			t.Errorf("phase %s (rate %g): offsets %v, want %v", ph.Name, ph.Rate, g, w)
		}
		if !strings.Contains(ph.Name, "rate-") {
			t.Errorf("phase name %q does not say its rate", ph.Name)
		}
	}
	_, _, err = runCLI(t, nil, "workload", "build", "--schedule", "rate:1,x,5", "-o", filepath.Join(dir, "bad.zst"))
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `"x" is not a positive rate`) {
		t.Errorf("rate:1,x,5: exit %d, %v", exitCode(err), err)
	}
}

// TestCountsAgree: a single phase is "1 phase", not "1 phases", in workload
// build's line and workload inspect's summary.
func TestCountsAgree(t *testing.T) {
	out := filepath.Join(t.TempDir(), "one.workload.zst")
	stdout, _, err := runCLI(t, nil, "workload", "build", "--schedule", "burst:1", "--repeats", "1", "--input-tokens", "100", "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "1 request in 1 phase, 100 input tokens") {
		t.Errorf("build says %q, want \"1 request in 1 phase, 100 input tokens\"", stdout)
	}
	stdout, _, err = runCLI(t, nil, "workload", "inspect", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "1 in 1 phase, 100 input tokens") || strings.Contains(stdout, "1 phases") {
		t.Errorf("inspect says:\n%s", stdout)
	}
}

// TestRateDuration: --duration bounds rate phases in time: with constant
// arrivals at 2 and 5 requests/s over 3 s the phases hold the arrivals at
// 0, 0.5, …, 2.5 s (6) and 0, 0.2, …, 2.8 s (15); it is refused with a
// burst schedule or beside --requests (exit 2).
func TestRateDuration(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "d.workload.zst")
	if _, stderr, err := runCLI(t, nil, "workload", "build", "--schedule", "rate:2,5", "--duration", "3s", "--arrival", "constant", "--input-tokens", "100", "-o", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	wl, err := workload.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[float64]int{2: 6, 5: 15}
	for _, ph := range wl.Header.Phases {
		if ph.Requests != want[ph.Rate] {
			t.Errorf("phase %s: %d requests, want %d", ph.Name, ph.Requests, want[ph.Rate])
		}
	}
	for _, r := range wl.Requests {
		if r.Offset >= 3e9 {
			t.Errorf("request %s at %d ns, past the 3 s duration", r.ID, r.Offset)
		}
	}
	if len(wl.Requests) != 21 {
		t.Errorf("%d requests, want 6 + 15", len(wl.Requests))
	}
	for _, args := range [][]string{
		{"--schedule", "burst:1", "--duration", "3s"},
		{"--schedule", "rate:2", "--duration", "3s", "--requests", "5"},
	} {
		_, _, err := runCLI(t, nil, append(append([]string{"workload", "build"}, args...), "-o", filepath.Join(dir, "bad.zst"))...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "--duration") {
			t.Errorf("%v: exit %d, %v", args, exitCode(err), err)
		}
	}
}

// `replay --duration` bounds each open-loop phase in time, and the trace is
// a whole time-bounded run, not a partial one; `analyze --by rate` shows
// rate phases by their rate.
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
