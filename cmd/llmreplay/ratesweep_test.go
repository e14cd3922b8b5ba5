package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// TestRateSweepWorkload: `workload build --schedule rate:1,2,5` is a rate
// sweep, one open-loop phase per rate, each with its own exact constant
// offsets (issue 12 item 11); a bad rate in the list is exit 2 naming it.
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

// TestCountsAgree: a single phase is "1 phase", not "1 phases" (issue 12
// item 7), in workload build's line and workload inspect's summary.
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
