//go:build unix

package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// README: "Failures are data. Refused connections, HTTP 400 walls, resets,
// stalls, malformed streams: each is a classified error on its request, the
// run goes on, and the analysis counts and clusters them." Through the
// binary with default flags: a server that refuses every third request with
// HTTP 400; the run sends every request, exits 0, the trace holds each
// refusal as an http-status error, and analyze counts them.
func TestPromiseFailuresAreData(t *testing.T) {
	bin := parallelBinary(t)
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost {
			return // connection pre-warming
		}
		if n.Add(1)%3 == 0 {
			http.Error(w, `{"error":{"message":"prompt too long"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1, 2\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "closed:1", "--requests", "9")
	tr := filepath.Join(dir, "f.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", ts.URL, "--model", "m", "-o", tr)
	if code != 0 {
		t.Fatalf("replay with failed requests: exit %d (want 0: the run completed)\n%s", code, e)
	}
	if !strings.Contains(e, "9 requests sent, 6 ok, 3 failed") {
		t.Errorf("replay's summary does not count the failures:\n%s", e)
	}
	out, e, code := run(t, nil, bin, "trace", "cat", tr)
	if code != 0 {
		t.Fatalf("trace cat: %d %s", code, e)
	}
	if c := strings.Count(out, `"http-status"`); c != 3 {
		t.Errorf("trace cat shows %d http-status errors, want 3:\n%s", c, out)
	}
	// The analysis counts them (the seeds' default table has no failure
	// column, so the counts are asked for by name).
	out, e, code = run(t, nil, bin, "analyze", "--metrics", "requests_ok,requests_failed", "--format", "csv", tr)
	if code != 0 {
		t.Fatalf("analyze: %d %s", code, e)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("analyze CSV: %v\n%s", err, out)
	}
	got := map[string]string{}
	for i, h := range rows[0] {
		got[h] = rows[1][i]
	}
	if got["requests_ok"] != "6" || got["requests_failed"] != "3" {
		t.Errorf("analyze counts %s ok and %s failed, want 6 and 3:\n%s", got["requests_ok"], got["requests_failed"], out)
	}
}
