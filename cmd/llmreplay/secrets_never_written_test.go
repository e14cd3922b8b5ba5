package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// The key is long and unusual so that no accident matches it; its halves
// are checked too, so a key cut by a length limit would still be found.
const secretKey = "sk-llmreplay-SECRET-7f3a9c2e41d8b6055e1f"

// leakyServer is an OpenAI-compatible server that does everything a server
// can do to put the caller's key in front of it: it echoes the key in error
// bodies, in streamed text, in usage, in redirect locations and in headers.
type leakyServer struct {
	n    atomic.Int64
	mu   sync.Mutex
	auth []string
}

func (s *leakyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	auth := r.Header.Get("Authorization")
	key := strings.TrimPrefix(auth, "Bearer ")
	if r.Method == http.MethodPost || r.URL.Path == "/v1/models" {
		// Connection pre-warming sends a bare GET, without the key.
		s.mu.Lock()
		s.auth = append(s.auth, auth)
		s.mu.Unlock()
	}
	w.Header().Set("X-Echo-Authorization", auth)
	if r.URL.Path == "/v1/models" {
		io.WriteString(w, `{"object":"list","data":[{"id":"echo-model","object":"model"}]}`)
		return
	}
	switch s.n.Add(1) % 4 {
	case 0:
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","header":%q}}`, key, auth)
	case 1:
		w.Header().Set("Location", "http://user:"+key+"@127.0.0.1:1/v1?api_key="+key+"&k="+key)
		w.WriteHeader(http.StatusFound)
	case 2:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1, %s\"},\"finish_reason\":null}]}\n\n", key)
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\", 2\"},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"note\":%q}}\n\n", auth)
		io.WriteString(w, "data: [DONE]\n\n")
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"error\":{\"message\":\"bad key %s\"}}\n\n", key)
	}
}

// leaks reports where in b the key (or a long piece of it) appears.
func leaks(b []byte) string {
	for _, s := range []string{secretKey, secretKey[:20], secretKey[20:]} {
		if i := bytes.Index(b, []byte(s)); i >= 0 {
			lo, hi := max(i-60, 0), min(i+len(s)+60, len(b))
			return fmt.Sprintf("%q", b[lo:hi])
		}
	}
	return ""
}

// TestSecretsNeverWritten runs replays through the CLI with the key in an
// environment variable and in the URL, against a server that echoes it
// everywhere, then greps every artifact for it: the trace (compressed and
// not), `trace cat` and `trace info`, stdout, stderr, error messages and
// every file the run left.
func TestSecretsNeverWritten(t *testing.T) {
	srv := &leakyServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	t.Setenv("LLMREPLAY_TEST_SECRET", secretKey)
	// The URL's password is used when no variable holds a key: the default
	// variable must be empty for "key in the URL" (naming an unset one is
	// refused, TestAPIKeyEnvUnset).
	t.Setenv("OPENAI_API_KEY", "")

	dir := t.TempDir()
	wl := filepath.Join(dir, "s.workload.zst")
	if _, _, err := runCLI(t, nil, "workload", "build", "--input-tokens", "64", "--max-tokens", "4",
		"--schedule", "closed:2", "--requests", "8", "-o", wl); err != nil {
		t.Fatal(err)
	}
	withCreds := strings.Replace(ts.URL, "http://", "http://admin:"+secretKey+"@", 1)
	runs := []struct {
		name string
		args []string
	}{
		{"key from --api-key-env", []string{"--url", ts.URL, "--api-key-env", "LLMREPLAY_TEST_SECRET"}},
		{"key in the URL", []string{"--url", withCreds}},
		{"both, model discovered", []string{"--url", withCreds + "/v1", "--api-key-env", "LLMREPLAY_TEST_SECRET"}},
	}
	var artifacts []struct{ what, data string }
	add := func(what, data string) { artifacts = append(artifacts, struct{ what, data string }{what, data}) }
	for i, run := range runs {
		tr := filepath.Join(dir, fmt.Sprintf("run%d.trace.zst", i))
		args := append([]string{"replay", wl, "-o", tr, "--label", "leak-check", "--salt-seed", "9"}, run.args...)
		if !strings.Contains(run.name, "discovered") {
			args = append(args, "--model", "m")
		}
		out, errOut, err := runCLI(t, nil, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", run.name, err, errOut)
		}
		add(run.name+": stdout", out)
		add(run.name+": stderr", errOut)
		if !strings.Contains(errOut, "8 requests sent") {
			t.Errorf("%s: summary missing from stderr: %q", run.name, errOut)
		}
		raw, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		add(run.name+": trace file", string(raw))
		add(run.name+": trace decompressed", plainTrace(t, tr))
		for _, sub := range [][]string{{"trace", "cat", tr}, {"trace", "info", tr}, {"trace", "info", "--json", tr},
			{"analyze", tr, "--format", "json"}, {"analyze", tr}} {
			out, errOut, err := runCLI(t, nil, sub...)
			if err != nil && sub[0] == "trace" && !strings.Contains(err.Error(), "unknown flag") {
				t.Fatalf("%v: %v", sub, err)
			}
			add(run.name+": "+strings.Join(sub[:2], " ")+" stdout", out)
			add(run.name+": "+strings.Join(sub[:2], " ")+" stderr", errOut)
			if err != nil {
				add(run.name+": "+strings.Join(sub[:2], " ")+" error", err.Error())
			}
		}
		// The trace says what the server did, just without the key.
		out, _, _ = runCLI(t, nil, "trace", "cat", tr)
		var classes []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec struct {
				Error *struct{ Class string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("trace cat line %q: %v", line, err)
			}
			if rec.Error != nil {
				classes = append(classes, rec.Error.Class)
			}
		}
		if len(classes) == 0 {
			t.Errorf("%s: no failed request: the server's complaints were not recorded", run.name)
		}
	}
	// A run that cannot start (the server refuses model discovery and echoes
	// the key in its complaint) must not put the key in its error.
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad key %s"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer refuse.Close()
	out, errOut, err := runCLI(t, nil, "replay", wl, "-o", filepath.Join(dir, "refused.trace.zst"),
		"--url", strings.Replace(refuse.URL, "http://", "http://u:"+secretKey+"@", 1), "--api-key-env", "LLMREPLAY_TEST_SECRET")
	if err == nil {
		t.Fatal("a run whose model discovery got 401 succeeded")
	}
	add("refused run: stdout", out)
	add("refused run: stderr", errOut)
	add("refused run: error", err.Error())

	// A closed port, credentials in the URL: connection errors name no URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://u:" + secretKey + "@" + ln.Addr().String()
	ln.Close()
	for _, model := range []string{"m", ""} { // "": model discovery is refused
		args := []string{"replay", wl, "-o", filepath.Join(dir, "closed"+model+".trace.zst"), "--url", closed, "--api-key-env", "LLMREPLAY_TEST_SECRET"}
		if model != "" {
			args = append(args, "--model", model)
		}
		out, errOut, err := runCLI(t, nil, args...)
		add("closed port: stdout", out)
		add("closed port: stderr", errOut)
		if err != nil {
			add("closed port: error", err.Error())
		}
		// Both fail: without --model discovery is refused; with it, every
		// request is refused and a run where nothing succeeded exits 1.
		if err == nil {
			t.Errorf("closed port, --model %q: no error", model)
		}
	}

	// Every file the runs left behind.
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			add("file "+filepath.Base(p), string(b))
		}
		return nil
	})

	for _, a := range artifacts {
		if where := leaks([]byte(a.data)); where != "" {
			t.Errorf("the API key leaked into %s: …%s…", a.what, where)
		}
	}
	// The key did reach the server, as a bearer token: it was used, not lost.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.auth) == 0 {
		t.Fatal("no request reached the server")
	}
	for i, a := range srv.auth {
		if a != "Bearer "+secretKey {
			t.Fatalf("request %d carried Authorization %q, want the bearer key", i, a)
		}
	}
}

// TestSimBindsLoopbackByDefault: the simulator has no authentication, so
// it listens on 127.0.0.1 unless told otherwise, and says so loudly when
// told to listen anywhere else.
func TestSimBindsLoopbackByDefault(t *testing.T) {
	cmd := newSimCmd()
	def := cmd.Flags().Lookup("addr").DefValue
	host, _, _ := strings.Cut(def, ":")
	if host != "127.0.0.1" {
		t.Errorf("sim --addr defaults to %q, want 127.0.0.1:PORT", def)
	}
	for _, c := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"0.0.0.0:0", true},
		{":0", true},
	} {
		out, errOut := runSimBriefly(t, c.addr)
		if got := strings.Contains(errOut, "WARNING") && strings.Contains(errOut, "reachable from other machines"); got != c.warn {
			t.Errorf("--addr %s: warning %v, want %v (stderr %q)", c.addr, got, c.warn, errOut)
		}
		if !strings.Contains(out, "SIMULATED") {
			t.Errorf("--addr %s: stdout %q", c.addr, out)
		}
	}
}

// runSimBriefly starts `llmreplay sim --addr addr`, waits until it serves,
// stops it as Ctrl-C would and returns what it printed.
func runSimBriefly(t *testing.T, addr string) (stdout, stderr string) {
	t.Helper()
	var out, errb testutil.Buffer
	root := NewRootCmd(&out, &errb)
	root.SetArgs([]string{"sim", "--addr", addr, "--profile", "fast"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "Press Ctrl-C") {
		select {
		case err := <-done:
			t.Fatalf("sim --addr %s ended early: %v\n%s", addr, err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sim --addr %s did not start: %q", addr, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("sim --addr %s: %v", addr, err)
	}
	return out.String(), errb.String()
}

// TestURLQueryKeptAndSecret: a key in --url's query, through the binary.
// `--url 'http://host/?api_key=K'` sent `POST /?api_key=K/v1/chat/completions`
// (the route after the query), and a server echoing the request line put K
// in error.body. Now routes go into the path, the query is kept (Azure's
// ?api-version= works), discovery included, and no query value reaches the
// trace, stdout or stderr.
func TestURLQueryKeptAndSecret(t *testing.T) {
	bin := parallelBinary(t)
	const secret = "qs-secret-0123456789abcdef"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.Method == http.MethodGet && r.URL.Path != "/v1/models" {
			return
		}
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		// Echo the request line, as some gateways do in their errors.
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"bad request to %s"}}`, r.URL.RequestURI())
	}))
	defer srv.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	tr := filepath.Join(dir, "t.trace.zst")
	o, e, code := run(t, nil, bin, "replay", wl, "--url", srv.URL+"/?api-version=2024-10-21&api_key="+secret, "-o", tr)
	if code != 1 { // every request failed (the server answers 400): exit 1
		t.Fatalf("replay: exit %d\n%s\n%s", code, o, e)
	}
	mu.Lock()
	for _, s := range seen {
		if s[:4] == "POST" && s != "POST /v1/chat/completions?api-version=2024-10-21&api_key="+secret && s != "POST /tokenize?api-version=2024-10-21&api_key="+secret {
			t.Errorf("the server saw %q", s)
		}
		if strings.HasPrefix(s, "GET /v1/models") && !strings.Contains(s, "api-version=2024-10-21") {
			t.Errorf("discovery lost the query: %q", s)
		}
	}
	mu.Unlock()
	texts := traceTexts(t, bin, tr, map[string]string{"stdout": o, "stderr": e})
	noneHolds(t, texts, secret)
	if !strings.Contains(texts["trace cat"], "REDACTED") {
		t.Errorf("the echoed request line was not redacted: %.400s", texts["trace cat"])
	}
}

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

// TestKeyNeverStoredFromScrapesOrExtraBody: a server whose /metrics names
// the caller's key in label values, a metric name and its help, and a run
// whose --extra-body carries the key's value under a name that does not look
// secret ({"user": KEY}). Through the built binary, with the key from the
// environment: no piece of the key reaches the trace, trace cat (records and
// --server-metrics), trace info, a merged trace, export's server_metrics.csv
// and .parquet, analyze, report, stdout or stderr. The scrapes are still
// there, with the key's place marked.
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

// fragmentKey is a 34-character sk-… key.
const fragmentKey = "sk-FRAGMENT-0123456789abcdefABCDEF"

// fragmentLeak reports a 12-byte piece of the key found in b: the key
// whole, cut at an edge, split across chunks or decoded from escapes.
func fragmentLeak(b []byte) string {
	for i := 0; i+12 <= len(fragmentKey); i++ {
		if j := bytes.Index(b, []byte(fragmentKey[i:i+12])); j >= 0 {
			lo, hi := max(j-40, 0), min(j+52, len(b))
			return fmt.Sprintf("%q", b[lo:hi])
		}
	}
	return ""
}

// TestSecretFragmentsNeverWritten: a key split across two streamed chunks, a
// message the server clipped in the middle of the key, an error body the
// client clips at 4 KiB across the key, a \u-escaped key in an error event,
// a model list naming the model after the key, and a 401 whose status line
// carries it. Through the built binary: no 12-byte piece of the key reaches
// the trace (compressed or not), trace cat/info, analyze, stdout or stderr.
func TestSecretFragmentsNeverWritten(t *testing.T) {
	bin := parallelBinary(t)
	var n atomic.Int64
	esc := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"model-%s","object":"model"}]}`, key)
			return
		}
		if r.Method != http.MethodPost {
			return // connection pre-warming
		}
		sse := func(events ...string) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range events {
				fmt.Fprintf(w, "data: %s\n\n", e)
				w.(http.Flusher).Flush()
			}
		}
		delta := func(s, finish string) string {
			f := "null"
			if finish != "" {
				f = `"` + finish + `"`
			}
			return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`, s, f)
		}
		switch n.Add(1) % 5 {
		case 0: // split across chunks, 17 + 17 and 5 + 29
			sse(delta("1, "+key[:17], ""), delta(key[17:]+", 2 "+key[:5], ""), delta(key[5:], "length"), "[DONE]")
		case 1: // \u-escaped in an error event
			sse(`{"error":{"message":"bad key ` + esc(key) + `"}}`)
		case 2: // a 5,000-byte body with the key across the 4 KiB cut
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, strings.Repeat("x", 4096-20)+key+strings.Repeat("y", 900))
		case 3: // a 400-byte message cut by the client's 300-byte clip inside the key
			sse(`{"error":{"message":"` + strings.Repeat("m", 280) + key + strings.Repeat("z", 86) + `"}}`)
		default: // the server's own clip: the message ends inside the key
			sse(`{"error":{"message":"Incorrect API key provided: ` + key[:31] + `"}}`)
		}
	}))
	defer ts.Close()
	env := []string{"LLMREPLAY_FRAGMENT_KEY=" + fragmentKey}
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "closed:2", "--requests", "10")
	tr := filepath.Join(dir, "f.trace.zst")
	var artifacts []struct{ what, data string }
	add := func(what, data string) { artifacts = append(artifacts, struct{ what, data string }{what, data}) }
	out, e, code := run(t, env, bin, "replay", wl, "--url", ts.URL, "--api-key-env", "LLMREPLAY_FRAGMENT_KEY", "-o", tr)
	if code != 0 && code != 1 {
		t.Fatalf("replay exit %d: %s", code, e)
	}
	add("replay stdout", out)
	add("replay stderr", e)
	raw, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	add("trace file", string(raw))
	plain := plainTrace(t, tr)
	add("trace decompressed", plain)
	for _, sub := range [][]string{{"trace", "cat", tr}, {"trace", "info", tr}, {"analyze", tr}, {"analyze", tr, "--format", "json"}} {
		o, e, _ := run(t, nil, bin, sub...)
		add(strings.Join(sub[:2], " ")+" stdout", o)
		add(strings.Join(sub[:2], " ")+" stderr", e)
	}
	if !strings.Contains(plain, "REDACTED") {
		t.Errorf("nothing was redacted: the server's echoes did not reach the trace")
	}

	// Model discovery answered 401 with the key in the status line.
	addr := testutil.ServeConns(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		fmt.Fprintf(c, "HTTP/1.1 401 Unauthorized %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", fragmentKey)
	})
	out, e, code = run(t, env, bin, "replay", wl, "--url", "http://"+addr, "--api-key-env", "LLMREPLAY_FRAGMENT_KEY", "-o", filepath.Join(dir, "d.trace.zst"))
	if code != 2 || !strings.Contains(e, "HTTP 401") {
		t.Errorf("discovery refused: exit %d, stderr %q", code, e)
	}
	add("discovery stdout", out)
	add("discovery stderr", e)
	for _, a := range artifacts {
		if where := fragmentLeak([]byte(a.data)); where != "" {
			t.Errorf("a piece of the key leaked into %s: …%s…", a.what, where)
		}
	}
}
