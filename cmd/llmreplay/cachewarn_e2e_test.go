//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCacheHitOnRepeatThroughTheBinary (issue #16 item 3): a --prefix
// shared:256 workload replayed with --salt off against the simulator
// without its prefix cache reports 0 cached tokens for every request, and
// analyze says so (no_cache_hit_on_repeat, 4 requests); with the cache on,
// the later requests hit the shared prefix and it does not.
func TestNoCacheHitOnRepeatThroughTheBinary(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := filepath.Join(dir, "w.jsonl.zst")
	if out, e, code := run(t, nil, bin, "workload", "build", "--prefix", "shared:256", "--schedule", "closed:1", "--requests", "4",
		"--input-tokens", "400", "--max-tokens", "8", "-o", wl); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, out, e)
	}
	for _, c := range []struct {
		simArgs []string
		warn    bool
	}{{[]string{"--profile", "vllm-rtx5090-fp8", "--no-prefix-cache"}, true}, {[]string{"--profile", "vllm-rtx5090-fp8"}, false}} {
		url := startSim(t, bin, c.simArgs...)
		tr := filepath.Join(dir, strings.Join(c.simArgs, "")+".trace.zst")
		if out, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--salt", "off", "-o", tr); code != 0 {
			t.Fatalf("replay %v: exit %d\n%s%s", c.simArgs, code, out, e)
		}
		out, e, _ := run(t, nil, bin, "analyze", tr)
		out = unwrapped(out)
		got := strings.Contains(out+e, "no_cache_hit_on_repeat")
		if got != c.warn || (c.warn && !strings.Contains(out+e, "a --prefix shared:256 run sent the same leading tokens unsalted in 4 requests")) {
			t.Errorf("sim %v: warning %v, want %v\n%s%s", c.simArgs, got, c.warn, out, e)
		}
	}
}
