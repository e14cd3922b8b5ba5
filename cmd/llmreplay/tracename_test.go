package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDefaultTraceName: replay without -o writes the trace where its help
// says, results/LABEL-TIME.trace.zst (issue 12 item 7), and says so; run as
// a user does, the built binary in a fresh folder with default flags.
func TestDefaultTraceName(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin, "--profile", "fast")
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.workload.zst")
	if out, err := exec.Command(bin, "workload", "build", "--schedule", "burst:1", "--repeats", "1", "--input-tokens", "100", "--max-tokens", "4", "-o", wl).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd := exec.Command(bin, "replay", wl, "--url", url, "--label", "my run")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// The help: "(default results/LABEL-TIME.trace.zst)"; the label made
	// safe for file names, the time in UTC as 20060102T150405Z.
	re := regexp.MustCompile(`results/my-run-\d{8}T\d{6}Z\.trace\.zst`)
	name := re.FindString(stderr.String())
	if name == "" {
		t.Fatalf("replay did not name results/my-run-TIME.trace.zst:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("the trace it named is not there: %v", err)
	}
	help, err := exec.Command(bin, "replay", "--help").Output()
	if err != nil || !bytes.Contains(help, []byte("(default results/LABEL-TIME.trace.zst)")) {
		t.Errorf("replay --help no longer states the default name: %v", err)
	}
}
