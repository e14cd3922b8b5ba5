package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// "replay and bench exit non-zero when nothing succeeded (keep
// --fail-on-error for any failed)": a run where every request failed
// measured nothing, so exit status 0 would tell a script it worked.
func TestNothingSucceededExits1(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
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

// "The same trace given twice doubles the evidence": a copy of a trace is
// the same run (same start time, salt seed and workload), so check gives
// the same verdict and n as for the file alone, and says it counted it once.
func TestSameRunTwiceCountsOnce(t *testing.T) {
	bin := parallelBinary(t)
	src := filepath.Join("..", "..", "traces", "samples", "llamacpp-rtx5090-q4km.trace.zst")
	cp := filepath.Join(t.TempDir(), "copy.trace.zst")
	copyFile(t, src, cp)
	claimArg := "per_stream_tps{concurrency=1} >= 480"
	once, _, code1 := run(t, nil, bin, "check", src, "--claim", claimArg)
	twice, e, code2 := run(t, nil, bin, "check", src, cp, "--claim", claimArg)
	if once != twice || code1 != code2 {
		t.Errorf("a copy changed the verdict:\nonce (exit %d): %s\ntwice (exit %d): %s", code1, once, code2, twice)
	}
	if !strings.Contains(e, "is the same run as") || !strings.Contains(e, "counted once") {
		t.Errorf("check did not say the copy was counted once: %q", e)
	}
	js, _, code := run(t, nil, bin, "analyze", src, cp, "--format", "json")
	if code != 0 || !strings.Contains(js, `"duplicate_trace"`) {
		t.Errorf("analyze --format json: exit %d, no duplicate_trace warning", code)
	}
}

// Jargon: users never saw the source documents, so help text and the
// metric list name things for what they are: no "the seeds'" and no
// untranslated Chinese.
func TestHelpSpeaksPlainly(t *testing.T) {
	cjk := regexp.MustCompile(`\p{Han}`)
	for _, args := range [][]string{{"--help"}, {"bench", "--help"}, {"analyze", "--help"}, {"analyze", "--list-metrics"},
		{"check", "--help"}, {"replay", "--help"}, {"workload", "build", "--help"}, {"workload", "inspect", "--help"}} {
		out, errOut, _ := runCLI(t, nil, args...)
		text := out + errOut
		if strings.Contains(strings.ToLower(text), "seeds'") || cjk.MatchString(text) {
			t.Errorf("llmreplay %s speaks the source documents' jargon:\n%s", strings.Join(args, " "), text)
		}
	}
}

// "A truncated or stopped trace is said so in check, and claims over it are
// at most INCONCLUSIVE unless --accept-partial": the sample trace cut in
// half (a crash mid-run) holds 175 of its 366 planned requests.
func TestPartialTraceIsInconclusive(t *testing.T) {
	bin := parallelBinary(t)
	src := filepath.Join("..", "..", "traces", "samples", "llamacpp-rtx5090-q4km.trace.zst")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(t.TempDir(), "half.trace.zst")
	if err := os.WriteFile(half, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, nil, bin, "check", src, "--claim", "requests_failed == 0")
	if code != 0 || !strings.HasPrefix(out, "HOLDS") {
		t.Fatalf("the whole trace: exit %d %s", code, out)
	}
	out, e, code := run(t, nil, bin, "check", half, "--claim", "requests_failed == 0")
	if code != exitInconclusive || !strings.HasPrefix(out, "INCONCLUSIVE") || !strings.Contains(out, "--accept-partial") ||
		!strings.Contains(e, "cut off after 175 of 366 requests") {
		t.Errorf("the cut trace: exit %d\n%s%s", code, out, e)
	}
	if out, _, code := run(t, nil, bin, "trace", "info", half); code != 0 || !strings.Contains(out, "cut off after 175 of 366 requests") {
		t.Errorf("trace info of the cut trace: exit %d\n%s", code, out)
	}
	if out, _, _ := run(t, nil, bin, "trace", "info", src); strings.Contains(out, "partial:") {
		t.Errorf("trace info calls the whole trace partial:\n%s", out)
	}
	if js, _, _ := run(t, nil, bin, "analyze", half, "--format", "json"); !strings.Contains(js, `"partial_trace"`) {
		t.Errorf("analyze --format json of the cut trace has no partial_trace warning")
	}
	out, _, code = run(t, nil, bin, "check", half, "--claim", "requests_failed == 0", "--accept-partial")
	if code != 0 || !strings.HasPrefix(out, "HOLDS") {
		t.Errorf("--accept-partial: exit %d %s", code, out)
	}
}

// TestSameLabelRefused: two runs of bench against one server carry one
// label ("sim fast"); analyze (and check, which reads traces alike) refuses
// to join them silently, with one line naming both fixes, and exit 2;
// --merge-labels joins them on purpose, and name=path tells them apart.
func TestSameLabelRefused(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		// Each run writes its own timestamped files; the second may land
		// in the same second, so each gets its own folder.
		mustRun(t, bin, "bench", "--profile", "fast", "--max-tokens", "16", "--concurrency", "1", "--repeats", "1", "-q",
			"--results", filepath.Join(dir, string(rune('a'+i))))
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*", "*.trace.zst"))
	if len(traces) != 2 {
		t.Fatalf("bench wrote %v", traces)
	}
	for _, cmd := range [][]string{{"analyze"}, {"check", "--claim", "per_stream_tps > 1"}} {
		o, e, code := run(t, nil, bin, append(cmd, traces...)...)
		if code != 2 || o != "" || strings.Count(strings.TrimSpace(e), "\n") != 0 ||
			!strings.Contains(e, `are both labelled "sim fast": name each (name=path) to compare them, or give --merge-labels to analyze them as one`) {
			t.Errorf("%s of two traces labelled alike: exit %d, want 2 and one line naming the fixes:\n%s%s", cmd[0], code, o, e)
		}
	}
	if o, e, code := run(t, nil, bin, append([]string{"analyze", "--merge-labels"}, traces...)...); code != 0 || !strings.Contains(o, "sim fast · concurrency 1 · 2 requests ok · 2 runs") {
		t.Errorf("analyze --merge-labels: exit %d\n%s%s", code, o, e)
	}
	if o, e, code := run(t, nil, bin, "analyze", "first="+traces[0], "second="+traces[1]); code != 0 || !strings.Contains(o, "first · concurrency 1") || !strings.Contains(o, "second · concurrency 1") {
		t.Errorf("analyze first=… second=…: exit %d\n%s%s", code, o, e)
	}
}
