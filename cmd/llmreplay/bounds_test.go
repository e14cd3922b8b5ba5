package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// TestHandEditedWorkloadRefused: issue #11 finding 5 through the binary. A
// workload edited to 2e9 salt words made replay die out of memory, and a
// burst of concurrency 10^8 started that many goroutines; now replay exits
// 2 at once with one line naming the field, before any request.
func TestHandEditedWorkloadRefused(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	good := filepath.Join(dir, "good.workload.zst")
	mustRun(t, bin, "workload", "build", "--input-tokens", "64", "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1", "-o", good)
	for _, c := range []struct {
		name, want string
		edit       func(*workload.Workload)
	}{
		{"salt words", "salt words in a", func(wl *workload.Workload) { wl.Requests[0].Salt.Words = 2_000_000_000 }},
		{"burst concurrency", "concurrency 100000000", func(wl *workload.Workload) { wl.Header.Phases[0].Concurrency = 100_000_000 }},
		{"closed concurrency", "concurrency 100000000", func(wl *workload.Workload) {
			wl.Header.Phases[0].Kind = workload.KindClosed
			wl.Header.Phases[0].Concurrency = 100_000_000
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl, err := workload.Open(good)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(wl)
			bad := filepath.Join(t.TempDir(), "bad.workload.zst")
			if err := workload.Create(bad, wl); err != nil {
				t.Fatal(err)
			}
			// No server: the file must be refused before anything is sent.
			_, e, code := run(t, nil, bin, "replay", bad, "--url", "http://127.0.0.1:9", "--model", "m", "-o", filepath.Join(t.TempDir(), "t.trace.zst"))
			if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", code, e, c.want)
			}
		})
	}
}
