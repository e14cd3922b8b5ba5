//go:build unix

package main

import (
	"bytes"
	"encoding/json"
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

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
)

// seenRequest is what the recording server got: one POST of a replay.
type seenRequest struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// recordingProxy is a server on 127.0.0.1 that records every request it
// receives and passes it on to the simulator, which answers in every API.
func recordingProxy(t *testing.T, simURL string) (string, func() []seenRequest) {
	t.Helper()
	target, _ := url.Parse(simURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // pass each streamed chunk on at once
	var (
		mu   sync.Mutex
		seen []seenRequest
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		s := seenRequest{method: r.Method, path: r.URL.Path, header: r.Header.Clone()}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &s.body); err != nil {
				t.Errorf("%s %s: the body is not a JSON object: %v", r.Method, r.URL.Path, err)
			}
		}
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
}

// --header and --extra-body reach every request of every API, through the
// binary, and the trace header records them with the secrets redacted; the
// secret reaches no output and no file.
func TestHeaderAndExtraBodyReachEveryAPI(t *testing.T) {
	bin := parallelBinary(t)
	simURL := startSim(t, bin)
	const secret = "tok-e2e-SECRET-9f8e7d6c5b4a"
	extra := `{"chat_template_kwargs":{"enable_thinking":false},"top_k":20,"api_key":"` + secret + `"}`
	for _, api := range endpoint.Names {
		t.Run(api, func(t *testing.T) {
			t.Parallel() // independent: a server and a folder of its own
			dir := t.TempDir()
			srv, seen := recordingProxy(t, simURL)
			shape := "chat"
			switch api {
			case "openai-completions", "llamacpp", "tgi", "sglang", "trtllm", "ollama-generate":
				shape = "completion"
			}
			wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1", "--shape", shape)
			tr := filepath.Join(dir, "x.trace.zst")
			out, e := mustRun(t, bin, "replay", wl, "--url", srv, "--api", api, "--model", "ensemble", "-o", tr,
				"--header", "X-Route: pool-a", "--header", "X-Auth-Token:"+secret, "--extra-body", extra)
			posts := 0
			for _, s := range seen() {
				if got := s.header.Get("X-Route"); got != "pool-a" {
					t.Errorf("%s %s: X-Route %q, want pool-a (every request carries the headers)", s.method, s.path, got)
				}
				if got := s.header.Get("X-Auth-Token"); got != secret {
					t.Errorf("%s %s: X-Auth-Token not sent", s.method, s.path)
				}
				// The server's tokenizer is asked with the headers, never the
				// extra body: that is for generation (top_k means nothing to
				// /tokenize, and a strict server would refuse it).
				if s.method != http.MethodPost || s.path == "/tokenize" {
					continue
				}
				posts++
				kw, _ := s.body["chat_template_kwargs"].(map[string]any)
				if kw == nil || kw["enable_thinking"] != false || s.body["top_k"] != float64(20) || s.body["api_key"] != secret {
					t.Errorf("%s: the extra body is not merged in: %v", s.path, s.body)
				}
				// The API's own fields are still there, untouched.
				if _, ok := s.body["stream"]; !ok && api != "trtllm" {
					t.Errorf("%s: the API's own stream field is gone: %v", s.path, s.body)
				}
			}
			if posts != 2 {
				t.Errorf("%d requests reached the server, want 2", posts)
			}
			r, err := trace.Open(tr)
			if err != nil {
				t.Fatal(err)
			}
			h := r.Header()
			r.Close()
			if h.RequestHeaders["X-Route"] != "pool-a" || h.RequestHeaders["X-Auth-Token"] != "REDACTED" {
				t.Errorf("trace header request_headers = %v, want X-Route kept and X-Auth-Token redacted", h.RequestHeaders)
			}
			var rec map[string]any
			if err := json.Unmarshal(h.ExtraBody, &rec); err != nil || rec["api_key"] != "REDACTED" || rec["top_k"] != json.Number("20") && rec["top_k"] != float64(20) {
				t.Errorf("trace header extra_body = %s, want top_k kept and api_key redacted", h.ExtraBody)
			}
			noneHolds(t, traceTexts(t, bin, tr, map[string]string{"stdout": out, "stderr": e}), secret)
		})
	}
}

// Bad --header and --extra-body values are bad input: one line naming the
// flag and the fix, exit status 2, before anything is sent or written, and
// the refused value (which may be a key) is not echoed.
func TestHeaderAndExtraBodyRefusals(t *testing.T) {
	bin := parallelBinary(t)
	simURL := startSim(t, bin)
	srv, seen := recordingProxy(t, simURL)
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"not JSON", []string{"--extra-body", `{"top_k":20`}, "--extra-body is not a JSON object"},
		{"array", []string{"--extra-body", `[1,2]`}, "--extra-body is not a JSON object (it is a JSON array"},
		{"null", []string{"--extra-body", `null`}, "--extra-body is not a JSON object"},
		{"owned stream", []string{"--extra-body", `{"stream":false}`}, `--extra-body sets "stream", which llmreplay sends itself`},
		{"owned max_tokens", []string{"--extra-body", `{"max_tokens":9}`}, `--extra-body sets "max_tokens"`},
		{"owned, --api auto", []string{"--api", "auto", "--extra-body", `{"stream":false}`}, `--extra-body sets "stream", which llmreplay sends itself`},
		{"owned model", []string{"--extra-body", `{"model":"other"}`}, `--extra-body sets "model"`},
		{"owned nested", []string{"--extra-body", `{"stream_options":{"include_usage":false}}`}, `--extra-body sets "stream_options.include_usage"`},
		{"missing file", []string{"--extra-body", "@" + filepath.Join(dir, "nope.json")}, "--extra-body @"},
		{"no colon", []string{"--header", "sk-NOT-ECHOED-123456"}, "--header needs NAME: VALUE"},
		{"owned header", []string{"--header", "Accept-Encoding: gzip"}, "--header Accept-Encoding is llmreplay's to set"},
		{"bad name", []string{"--header", "X Bad: 1"}, `--header name "X Bad" is not a valid HTTP header name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".trace.zst")
			_, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", srv, "--model", "m", "-o", tr}, c.args...)...)
			// --api auto says first which API it chose; the error is one line.
			errLines := 0
			for _, l := range strings.Split(strings.TrimSpace(e), "\n") {
				if !strings.HasPrefix(l, "api: ") {
					errLines++
				}
			}
			if code != 2 || !strings.Contains(e, c.want) || errLines != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, e, c.want)
			}
			if strings.Contains(e, "NOT-ECHOED") {
				t.Errorf("the refused header value is echoed: %q", e)
			}
			if _, err := os.Stat(tr); err == nil {
				t.Errorf("a trace was written for a refused run")
			}
		})
	}
	for _, s := range seen() {
		if s.method == http.MethodPost {
			t.Errorf("a refused run sent %s %s", s.method, s.path)
		}
	}
	// bench checks both before it starts the simulator.
	_, e, code := run(t, nil, bin, "bench", "--extra-body", `{"stream":false}`, "--results", filepath.Join(dir, "res"))
	if code != 2 || !strings.Contains(e, `--extra-body sets "stream"`) || strings.Contains(e, "SIMULATED") {
		t.Errorf("bench: exit %d, stderr %q; want 2 before the simulator starts", code, e)
	}
}

// kube job writes replay's flags into its manifest: a secret header or an
// extra body holding a secret is refused there (exit 2, no file), while a
// routing header and an @FILE body go through.
func TestKubeJobRefusesSecretHeaders(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1")
	base := []string{"kube", "job", wl, "--shards", "2", "--image", "i", "--url", "http://vllm:8000", "--results-claim", "r", "--start-at", "2030-01-02T03:04:05Z"}
	const secret = "sk-kube-SECRET-123456789"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--header", "Authorization: Bearer " + secret}, "--header Authorization after -- would write a credential into the manifest"},
		{[]string{"--header=X-Api-Key: " + secret}, "--header X-Api-Key after --"},
		{[]string{"--extra-body", `{"api_key":"` + secret + `"}`}, "--extra-body after -- holds a secret-looking value"},
	} {
		job := filepath.Join(dir, "job.yaml")
		_, e, code := run(t, nil, bin, append(append(append([]string{}, base...), "-o", job, "--"), c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) || strings.Contains(e, secret) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q and no secret", c.args, code, e, c.want)
		}
		if _, err := os.Stat(job); err == nil {
			t.Errorf("%v: the manifest was written", c.args)
		}
	}
	job := filepath.Join(dir, "ok.yaml")
	if _, e, code := run(t, nil, bin, append(append([]string{}, base...), "-o", job, "--", "--header", "X-Route: pool-a", "--extra-body", "@/cfg/body.json")...); code != 0 {
		t.Fatalf("a routing header: exit %d: %s", code, e)
	}
	if y, _ := os.ReadFile(job); !strings.Contains(string(y), "X-Route: pool-a") || !strings.Contains(string(y), "@/cfg/body.json") {
		t.Errorf("job.yaml lacks the replay flags:\n%s", y)
	}
}

// bench takes the same --header and --extra-body as replay.
func TestBenchSendsHeaderAndExtraBody(t *testing.T) {
	bin := parallelBinary(t)
	srv, seen := recordingProxy(t, startSim(t, bin))
	dir := t.TempDir()
	_, e, code := run(t, nil, bin, "bench", "--url", srv, "--concurrency", "1,2", "--input-tokens", "64", "--max-tokens", "4", "--repeats", "1",
		"--results", filepath.Join(dir, "res"), "--header", "X-Route: pool-b", "--extra-body", `{"top_k":7}`)
	if code != 0 {
		t.Fatalf("bench exit %d: %s", code, e)
	}
	posts := 0
	for _, s := range seen() {
		if s.header.Get("X-Route") != "pool-b" {
			t.Errorf("%s %s without the header", s.method, s.path)
		}
		if s.method == http.MethodPost && s.path != "/tokenize" { // asked with the headers, without the extra body
			posts++
			if s.body["top_k"] != float64(7) {
				t.Errorf("%s: body %v lacks top_k", s.path, s.body)
			}
		}
	}
	if posts != 3 {
		t.Errorf("%d requests, want 3", posts)
	}
}
