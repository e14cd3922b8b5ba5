package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestURLQueryKeptAndSecret: issue #11 finding 9 through the binary.
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
	wl := filepath.Join(dir, "w.workload.zst")
	if _, e, code := run(t, nil, bin, "workload", "build", "--input-tokens", "64", "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1", "-o", wl); code != 0 {
		t.Fatal(e)
	}
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
