//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Repeats and the prefix cache: by default every prompt is salted apart,
// so a second run cannot hit the first's cache; with --salt off, a server
// that never hits its cache on a repeat is said to.

// promptServer answers every chat request with a short finished stream and
// keeps the prompt it was sent.
type promptServer struct {
	mu      sync.Mutex
	prompts []string
}

func (s *promptServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost {
		return // connection pre-warming
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.prompts = append(s.prompts, req.Messages[0].Content)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1, 2\"},\"finish_reason\":null}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *promptServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prompts
	s.prompts = nil
	slices.Sort(p)
	return p
}

// README: "No cache tricks. Each run fills a salt slot at the start of every
// prompt with words drawn from a per-run seed, so replaying the same
// workload twice cannot hit the first run's prefix cache (`--salt off` for
// cache studies)." Two default runs of one workload send no prompt twice;
// two --salt off runs send the same prompts.
func TestPromiseNoCacheTricks(t *testing.T) {
	bin := parallelBinary(t)
	srv := &promptServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:3", "--repeats", "2")
	replayRun := func(name string, extra ...string) []string {
		t.Helper()
		args := append([]string{"replay", wl, "--url", ts.URL, "--model", "m", "-o", filepath.Join(dir, name+".trace.zst")}, extra...)
		if _, e, code := run(t, nil, bin, args...); code != 0 {
			t.Fatalf("replay %s: exit %d: %s", name, code, e)
		}
		p := srv.take()
		if len(p) != 6 {
			t.Fatalf("replay %s: the server saw %d prompts, want 6", name, len(p))
		}
		return p
	}
	a, b := replayRun("a"), replayRun("b")
	for _, p := range a {
		if slices.Contains(b, p) {
			t.Errorf("a prompt was sent by both default runs: a prefix cache would serve the second one\n%.120q", p)
		}
	}
	off1, off2 := replayRun("off1", "--salt", "off"), replayRun("off2", "--salt", "off")
	if !slices.Equal(off1, off2) {
		t.Error("two --salt off runs sent different prompts: cache studies need the workload verbatim")
	}
}

// TestNoCacheHitOnRepeatThroughTheBinary: a --prefix shared:256 workload
// replayed with --salt off against the simulator without its prefix cache
// reports 0 cached tokens for every request, and analyze says so
// (no_cache_hit_on_repeat, 4 requests); with the cache on, the later
// requests hit the shared prefix and it does not.
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
