package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// keyEchoServer streams short answers and, in its /metrics, labels series
// with the key of the last request it saw (as a gateway counting usage per
// key does), in the label values, a metric name and a HELP text; it also
// echoes every request body in its answers.
type keyEchoServer struct {
	mu      sync.Mutex
	key     string
	body    string
	scrapes int
}

func (s *keyEchoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	if k := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); k != "" {
		s.key = k
	}
	if len(b) > 0 {
		s.body = string(b)
	}
	key, body := s.key, s.body
	if r.URL.Path == "/metrics" {
		s.scrapes++
	}
	broken := s.scrapes%2 == 0
	s.mu.Unlock()
	switch {
	case r.URL.Path == "/metrics" && broken:
		// Every other scrape is malformed, quoting the key where the
		// parser's complaint will quote it back.
		fmt.Fprintf(w, "vllm:num_requests_running{api_key=%q} one %s\n", key, key)
	case r.URL.Path == "/metrics":
		fmt.Fprintf(w, "# HELP vllm:num_requests_running running for %s\n# TYPE vllm:num_requests_running gauge\n", key)
		fmt.Fprintf(w, "vllm:num_requests_running{api_key=%q,model_name=\"m\"} 1\n", key)
		fmt.Fprintf(w, "vllm:num_requests_waiting{user=\"u-%s-x\",path=%q} 0\n", key, "/v1?key="+key)
		fmt.Fprintf(w, "{\"tokens_%s\",le=\"+Inf\"} 3\n", key)
	case r.URL.Path == "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	case r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "text/event-stream")
		echo, _ := json.Marshal("1, " + body)
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":\"length\"}]}\n\n", echo)
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// TestKeyNeverStoredFromScrapesOrExtraBody (hostile input round 3,
// findings 1 and 9): a server whose /metrics names the caller's key in
// label values, a metric name and its help, and a run whose --extra-body
// carries the key's value under a name that does not look secret
// ({"user": KEY}). Through the built binary, with the key from the
// environment: no piece of the key reaches the trace, trace cat (records
// and --server-metrics), trace info, a merged trace, export's
// server_metrics.csv and .parquet, analyze, report, stdout or stderr. The
// scrapes are still there, with the key's place marked.
func TestKeyNeverStoredFromScrapesOrExtraBody(t *testing.T) {
	bin := parallelBinary(t)
	ts := httptest.NewServer(&keyEchoServer{})
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "closed:2", "--requests", "6")
	env := []string{"LLMREPLAY_TEST_SECRET=" + secretKey}
	tr := filepath.Join(dir, "shard0.trace.zst")
	var artifacts []struct{ what, data string }
	add := func(what, data string) { artifacts = append(artifacts, struct{ what, data string }{what, data}) }
	o, e, code := run(t, env, bin, "replay", wl, "--url", ts.URL, "--api-key-env", "LLMREPLAY_TEST_SECRET", "--model", "m",
		"--server-metrics-interval", "50ms", "--shard", "0/1", "--extra-body", `{"user":"`+secretKey+`","metadata":{"tags":["a `+secretKey+` b"]}}`, "-o", tr)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, o, e)
	}
	add("replay stdout", o)
	add("replay stderr", e)
	merged := filepath.Join(dir, "merged.trace.zst")
	tables := filepath.Join(dir, "tables")
	page := filepath.Join(dir, "r.html")
	for _, args := range [][]string{
		{"trace", "merge", tr, "-o", merged},
		{"trace", "cat", tr}, {"trace", "cat", "--server-metrics", tr}, {"trace", "cat", "--server-metrics", merged},
		{"trace", "info", tr},
		{"export", "--format", "csv", "-o", tables, tr}, {"export", "--format", "parquet", "-o", tables, merged},
		{"analyze", "--format", "json", tr}, {"report", tr, "-o", page},
	} {
		o, e, code := run(t, nil, bin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, e)
		}
		add(strings.Join(args[:2], " ")+" stdout", o)
		add(strings.Join(args[:2], " ")+" stderr", e)
		if strings.Join(args[:3], " ") == "trace cat --server-metrics" {
			if !strings.Contains(o, "vllm:num_requests_running") || !strings.Contains(o, "REDACTED") {
				t.Errorf("the scrapes are missing or show no redaction: %.500s", o)
			}
		}
	}
	// Every file left, and the traces decompressed.
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		add("file "+filepath.Base(p), string(b))
		if strings.HasSuffix(p, ".zst") {
			add("file "+filepath.Base(p)+" decompressed", plainTrace(t, p))
		}
		return nil
	})
	for _, a := range artifacts {
		if where := leaks([]byte(a.data)); where != "" {
			t.Errorf("the API key leaked into %s: …%s…", a.what, where)
		}
	}
}
