package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// builtBinary builds llmreplay once per test run, so tests can run it as a
// user does: its own process, its flags, its exit status.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the llmreplay binary")
	}
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llmreplay-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "llmreplay")
		if runtime.GOOS == "windows" {
			binaryPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = err
			binaryPath = string(out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("go build: %v\n%s", binaryErr, binaryPath)
	}
	return binaryPath
}

// startSim runs `llmreplay sim` on a free loopback port and returns its
// base URL; the process ends with the test.
func startSim(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"sim", "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			if u := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(sc.Text()); u != "" && !found {
				found = true
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(60 * time.Second):
		t.Fatal("the simulator printed no address within 60 s")
	}
	return ""
}
