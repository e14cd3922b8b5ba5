//go:build unix

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The issue's "done when": `llmreplay replay --api X` and `llmreplay bench
// --api X` work against the simulator for every X the README lists beyond
// the OpenAI ones, through the built binary.
func TestAPIsReplayAndBenchThroughTheBinary(t *testing.T) {
	bin := builtBinary(t)
	for _, api := range []string{"anthropic", "openai-responses", "tgi", "sglang", "trtllm"} {
		t.Run(api, func(t *testing.T) {
			dir := t.TempDir()
			simURL := startSim(t, bin)
			// Raw-prompt APIs take the completion shape, chat APIs the default.
			shape := map[string]string{"tgi": "completion", "sglang": "completion", "trtllm": "completion"}[api]
			if shape == "" {
				shape = "chat"
			}
			wl := buildWorkload(t, bin, dir, "--max-tokens", "6", "--schedule", "burst:2", "--repeats", "1", "--shape", shape)
			tr := filepath.Join(dir, "t.trace.zst")
			// Triton addresses a model by name in the route: it must be given.
			var model []string
			if api == "trtllm" {
				model = []string{"--model", "ensemble"}
			}
			if _, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", simURL, "--api", api, "-o", tr}, model...)...); code != 0 {
				t.Fatalf("replay exit %d: %s", code, e)
			}
			info, _, _ := run(t, nil, bin, "trace", "info", tr)
			if !strings.Contains(info, "api="+api) || !strings.Contains(info, "(") || !strings.Contains(info, " 0 failed)") {
				t.Errorf("trace info:\n%s", info)
			}
			out, e, code := run(t, nil, bin, "analyze", tr)
			if code != 0 || !strings.Contains(out, "TTFT") {
				t.Errorf("analyze exit %d: %s %s", code, out, e)
			}
			// The simulator's usage reaches the analysis: output tokens come
			// from the server's count, not the tokenizer.
			js, _, _ := run(t, nil, bin, "analyze", tr, "--format", "json")
			// Triton's generate_stream sends no counts: the tokenizer counts.
			source := "usage"
			if api == "trtllm" {
				source = "tokenizer"
			}
			if !strings.Contains(js, "\"output_token_sources\": {\n        \""+source+"\": 2\n") {
				t.Errorf("analyze does not take output tokens from usage:\n%.2000s", js)
			}
			res := filepath.Join(dir, "results")
			out, e, code = run(t, nil, bin, append([]string{"bench", "--api", api, "--shape", shape, "--concurrency", "1,2", "--input-tokens", "64", "--max-tokens", "6", "--repeats", "1", "--results", res}, model...)...)
			if code != 0 || !strings.Contains(e, "3 requests sent, 3 ok, 0 failed") {
				t.Errorf("bench exit %d:\n%s\n%s", code, out, e)
			}
		})
	}
}

// TestAnthropicKeyGoesInXAPIKeyOnly: with --api anthropic the key is sent
// as x-api-key with anthropic-version, never as a bearer token, and no
// output or file of the run holds it.
func TestAnthropicKeyGoesInXAPIKeyOnly(t *testing.T) {
	bin := builtBinary(t)
	const key = "sk-ant-e2e-KEY-7b3c9d1e5f20a4"
	simURL := startSim(t, bin)
	target, _ := url.Parse(simURL)
	var (
		mu   sync.Mutex
		seen []string
	)
	proxy := httputil.NewSingleHostReverseProxy(target)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("x-api-key")+" "+r.Header.Get("anthropic-version")+" bearer="+r.Header.Get("Authorization"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "3", "--schedule", "burst:2", "--repeats", "1")
	tr := filepath.Join(dir, "k.trace.zst")
	out, e, code := run(t, []string{"ANTHROPIC_API_KEY=" + key}, bin, "replay", wl, "--url", ts.URL, "--api", "anthropic", "--api-key-env", "ANTHROPIC_API_KEY", "-o", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || !strings.HasPrefix(seen[0], "/v1/models "+key+" 2023-06-01") {
		t.Errorf("requests the server saw: %q", seen)
	}
	for _, s := range seen {
		if strings.HasPrefix(s, "/ ") {
			continue // pre-warming opens connections with a bare GET /, which carries no key
		}
		if !strings.Contains(s, " "+key+" 2023-06-01 bearer=") || !strings.HasSuffix(s, "bearer=") {
			t.Errorf("a request without x-api-key or with a bearer token: %q", s)
		}
	}
	raw, _ := os.ReadFile(tr)
	dec, _ := zstd.NewReader(bytes.NewReader(raw))
	plain, _ := io.ReadAll(dec)
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	for name, text := range map[string]string{"stdout": out, "stderr": e, "trace": string(plain), "trace info": info} {
		if strings.Contains(text, key[:16]) || strings.Contains(text, key[len(key)-16:]) {
			t.Errorf("the key appears in %s", name)
		}
	}
}
