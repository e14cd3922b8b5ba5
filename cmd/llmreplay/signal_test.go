//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// sigintArgsEnv carries the command line of the child that
// TestSIGINTClosesTraceCleanly interrupts: the test binary runs main()
// itself, so the signal handling, the exit status and the messages are the
// real command's.
const sigintArgsEnv = "LLMREPLAY_SIGINT_CHILD_ARGS"

// sigintChild runs the command line in args as the llmreplay binary would.
func sigintChild(args string) {
	var a []string
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		fmt.Fprintln(os.Stderr, "bad child args:", err)
		os.Exit(99)
	}
	os.Args = append([]string{"llmreplay"}, a...)
	main()
	os.Exit(0)
}

func TestSIGINTClosesTraceCleanly(t *testing.T) {
	if args := os.Getenv(sigintArgsEnv); args != "" {
		sigintChild(args)
	}
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	t.Parallel() // the child is its own process; the 5 s bound is wide
	// A server that streams a token every 20 ms for as long as the client
	// listens: every request is still in flight when the signal comes.
	srv := &pacedServer{tokens: 1 << 30, gap: 20 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	dir := t.TempDir()
	wl := filepath.Join(dir, "int.workload.zst")
	if _, _, err := runCLI(t, nil, "workload", "build", "--input-tokens", "64", "--max-tokens", "2000",
		"--schedule", "burst:3", "--repeats", "3", "-o", wl); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "int.trace.zst")
	args, _ := json.Marshal([]string{"replay", wl, "--url", ts.URL, "--model", "m", "-o", tr, "--grace", "300ms"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGINTClosesTraceCleanly$")
	cmd.Env = append(os.Environ(), sigintArgsEnv+"="+string(args))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for srv.started.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the child never sent its first burst: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // some chunks on the wire
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	err := cmd.Wait()
	took := time.Since(signalled)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130\nstderr: %s", err, stderr.String())
	}
	if took > 5*time.Second {
		t.Errorf("the child took %v to stop after SIGINT with --grace 300ms", took)
	}
	msg := stderr.String()
	for _, want := range []string{"3 requests sent, 0 ok, 3 failed (cancelled 3), 6 not sent (stopped)", "stopped: the trace " + tr} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}

	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for r.Scan() {
		rec := r.Record()
		n++
		if rec.Error == nil || rec.Error.Class != trace.ErrCancelled {
			t.Errorf("%s: %+v, want cancelled after the grace period", rec.ID, rec.Error)
		}
		if len(rec.Chunks) < 5 || rec.Status != 200 {
			t.Errorf("%s: status %d, %d chunks: what arrived before the cut is lost", rec.ID, rec.Status, len(rec.Chunks))
		}
	}
	if r.Err() != nil || r.Truncated() {
		t.Fatalf("after SIGINT the trace reads with error %v, truncated %v: it was not closed cleanly", r.Err(), r.Truncated())
	}
	if n != 3 {
		t.Errorf("%d records, want the 3 in flight", n)
	}
}
