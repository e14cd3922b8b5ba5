//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeparateSimulatorTimeScaleSaid: a replay with default flags against a
// separately started `llmreplay sim --time-scale 0.1` records nothing in
// its header about the scale, yet analyze and the report say the numbers
// are the profile's scaled: the simulator reports its scale on /metrics,
// which replay scrapes by default into the trace.
func TestSeparateSimulatorTimeScaleSaid(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin, "--profile", "llamacpp-rtx5090-q4km", "--time-scale", "0.1")
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "16", "--schedule", "burst:1", "--repeats", "2")
	tr := filepath.Join(dir, "run.trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", tr); code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, e)
	}
	const note = "ran at time scale 0.1: every duration is 0.1× the profile's, so these latencies read 0.1× and these speeds 10×"
	out, e, code := run(t, nil, bin, "analyze", tr)
	if code != 0 || !strings.Contains(unwrapped(out), note) || !strings.Contains(unwrapped(out), "profile llamacpp-rtx5090-q4km") {
		t.Errorf("analyze (exit %d) does not say the simulator's time scale:\n%s\n%s", code, out, e)
	}
	html := filepath.Join(dir, "r.html")
	if _, e, code := run(t, nil, bin, "report", tr, "-o", html); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, e)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "time scale 0.1") {
		t.Errorf("the report does not say the simulator's time scale")
	}
}
