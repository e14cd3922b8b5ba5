//go:build unix

package main

import (
	"bytes"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMWithinGraceAnySchedule: SIGTERM stops a replay within the grace
// period whatever its schedule: a closed loop of 400 workers without
// pre-warming (it once ignored SIGTERM for 112 s), an open loop and a burst,
// all against a server whose streams never end. Through the built binary;
// the bound (15 s against a 300 ms grace and a 10-minute request timeout) is
// wide enough for a busy machine.
func TestSIGTERMWithinGraceAnySchedule(t *testing.T) {
	bin := parallelBinary(t)
	// Streams that never end (a token every 50 ms while the client reads).
	srv := &pacedServer{tokens: 1 << 30, gap: 50 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, c := range []struct {
		name  string
		build []string
		flags []string
	}{
		{"closed without prewarm", []string{"--schedule", "closed:400", "--requests", "800"}, []string{"--prewarm=false"}},
		{"open loop", []string{"--schedule", "rate:50", "--requests", "400"}, nil},
		{"burst", []string{"--schedule", "burst:64", "--repeats", "2"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			wl := buildWorkload(t, bin, dir, append([]string{"--max-tokens", "2000"}, c.build...)...)
			tr := filepath.Join(dir, "t.trace.zst")
			before := srv.started.Load()
			cmd := exec.Command(bin, append([]string{"replay", wl, "--url", ts.URL, "--model", "m", "-o", tr, "--grace", "300ms"}, c.flags...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			deadline := time.Now().Add(60 * time.Second)
			for srv.started.Load()-before < 5 {
				if time.Now().After(deadline) {
					t.Fatalf("the replay sent nothing: %s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatalf("still running 15 s after SIGTERM with --grace 300ms:\n%s", stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d, want 130:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "stopped: the trace "+tr) {
				t.Errorf("stderr:\n%s", stderr.String())
			}
			if _, e, code := run(t, nil, bin, "trace", "info", tr); code != 0 {
				t.Errorf("the stopped run's trace does not read: %s", e)
			}
		})
	}
}
