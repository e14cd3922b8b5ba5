package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// "replay and bench exit non-zero when nothing succeeded (keep
// --fail-on-error for any failed)": a run where every request failed
// measured nothing, so exit status 0 would tell a script it worked.
func TestNothingSucceededExits1(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--schedule", "burst:2", "--repeats", "1", "--max-tokens", "8")

	allFail := startSim(t, bin, "--profile", "fast", "--error-rate", "1")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", allFail, "-o", filepath.Join(dir, "fail.trace.zst"))
	if code != 1 || !strings.Contains(e, "none of the 2 requests succeeded (2 failed with http-status)") {
		t.Errorf("replay with every request failed: exit %d, want 1 and the reason\n%s", code, e)
	}
	_, e, code = run(t, nil, bin, "bench", "--url", allFail, "--concurrency", "1", "--repeats", "1", "--max-tokens", "8",
		"--input-tokens", "64", "--results", filepath.Join(dir, "bench"))
	if code != 1 || !strings.Contains(e, "none of the") {
		t.Errorf("bench with every request failed: exit %d, want 1\n%s", code, e)
	}

	// Half fail (seeded): some succeeded, so the run measured something and
	// exits 0 unless --fail-on-error asks for "any failed".
	half := startSim(t, bin, "--profile", "fast", "--error-rate", "0.5", "--seed", "3")
	wl8 := buildWorkload(t, bin, t.TempDir(), "--schedule", "burst:4", "--repeats", "2", "--max-tokens", "8")
	_, e, code = run(t, nil, bin, "replay", wl8, "--url", half, "-o", filepath.Join(dir, "half.trace.zst"))
	if code != 0 || strings.Contains(e, "none of the") {
		t.Errorf("replay with some requests ok: exit %d, want 0\n%s", code, e)
	}
	_, e, code = run(t, nil, bin, "replay", wl8, "--url", half, "--fail-on-error", "-o", filepath.Join(dir, "half2.trace.zst"))
	if code != 1 || !strings.Contains(e, "failed (--fail-on-error)") {
		t.Errorf("--fail-on-error with failed requests: exit %d, want 1\n%s", code, e)
	}
}
