package main

import (
	"path/filepath"
	"strings"
	"testing"
)

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
		if _, e, code := run(t, nil, bin, "bench", "--profile", "fast", "--max-tokens", "16", "--concurrency", "1", "--repeats", "1", "-q",
			"--results", filepath.Join(dir, string(rune('a'+i)))); code != 0 {
			t.Fatalf("bench: exit %d\n%s", code, e)
		}
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
