package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSimList(t *testing.T) {
	var out, errb bytes.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetArgs([]string{"sim", "--list"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llamacpp-rtx5090-q4km", "vllm-rtx5090-bf16", "vllm-rtx5090-fp8", "mlx-m3ultra-4bit", "fast", "slots=32"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("--list lacks %q:\n%s", name, out.String())
		}
	}
}

func TestSimBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"sim", "--profile", "nonesuch"},
		{"sim", "--addr", "nonsense"},
		{"sim", "--error-rate", "2"},
		{"sim", "--token-interval", "-1s"},
	} {
		root := NewRootCmd(io.Discard, io.Discard)
		root.SetArgs(args)
		err := root.Execute()
		if exitCode(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
}

// TestSimServes runs the command, talks to it and stops it the way Ctrl-C
// does, by cancelling its context.
func TestSimServes(t *testing.T) {
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	root := NewRootCmd(pw, &errb)
	root.SetArgs([]string{"sim", "--addr", "127.0.0.1:0", "--profile", "fast", "--inflate-usage"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); pw.Close() }()
	buf := make([]byte, 4096)
	n, _ := pr.Read(buf)
	go io.Copy(io.Discard, pr)
	first := string(buf[:n])
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	if url == "" || !strings.Contains(first, "SIMULATED") {
		t.Fatalf("first output %q", first)
	}
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"hi","max_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"completion_tokens":30`) {
		t.Errorf("inflated usage missing: %s", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sim did not stop on cancel")
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}
