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

// TestHostileResponsesLeaveReadableTraces (through the built binary): a
// server that streams one-token chunks forever past max_tokens 16, one that
// sends 70 events of 3.9 MB of text, and one that sends 12 MB of one
// repeated character. Each such response is stopped as "overlong" (not held
// until the 10-minute timeout), the good response beside it is kept, and
// every command reads the trace: trace info, trace cat, analyze and check.
func TestHostileResponsesLeaveReadableTraces(t *testing.T) {
	bin := parallelBinary(t)
	chunk := func(s string) string {
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", s)
	}
	big := strings.Repeat("0123456789abcdef", 3_900_000/16)
	for _, c := range []struct {
		name  string
		serve func(w io.Writer, done <-chan struct{})
		want  string
	}{
		{"chunks forever", func(w io.Writer, done <-chan struct{}) {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, err := io.WriteString(w, chunk(fmt.Sprintf(" %d,", i))); err != nil {
					return
				}
			}
		}, "went past 128 chunks for max_tokens 16"},
		{"70 events of 3.9 MB", func(w io.Writer, _ <-chan struct{}) {
			for range 70 {
				if _, err := io.WriteString(w, chunk(big)); err != nil {
					return
				}
			}
			io.WriteString(w, "data: [DONE]\n\n")
		}, "went past 1052672 bytes of text for max_tokens 16"},
		{"12 MB of one character", func(w io.Writer, _ <-chan struct{}) {
			a := strings.Repeat("a", 4_000_000)
			for range 3 {
				if _, err := io.WriteString(w, chunk(a)); err != nil {
					return
				}
			}
			io.WriteString(w, "data: [DONE]\n\n")
		}, "went past 1052672 bytes of text for max_tokens 16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // independent: a server and a folder of its own
			var n atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.Method != http.MethodPost {
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				if n.Add(1)%2 == 0 { // every other request is a good one
					io.WriteString(w, chunk(" 1, 2")+"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
					return
				}
				c.serve(w, r.Context().Done())
			}))
			defer ts.Close()
			dir := t.TempDir()
			wl := buildWorkload(t, bin, dir, "--max-tokens", "16", "--schedule", "closed:1", "--requests", "4")
			tr := filepath.Join(dir, "h.trace.zst")
			_, e, code := run(t, nil, bin, "replay", wl, "--url", ts.URL, "--model", "m", "-o", tr)
			if code != 0 || !strings.Contains(e, "4 requests sent, 2 ok, 2 failed (overlong 2)") {
				t.Fatalf("replay exit %d:\n%s", code, e)
			}
			info, e, code := run(t, nil, bin, "trace", "info", tr)
			if code != 0 || !strings.Contains(info, "records:    4 (2 ok, 2 failed: 2 overlong)") {
				t.Errorf("trace info exit %d:\n%s%s", code, info, e)
			}
			cat, e, code := run(t, nil, bin, "trace", "cat", tr)
			if code != 0 || strings.Count(cat, `"class":"overlong"`) != 2 || !strings.Contains(cat, c.want) {
				t.Errorf("trace cat exit %d: %.600s %s", code, cat, e)
			}
			out, e, code := run(t, nil, bin, "analyze", tr)
			if code != 0 || !strings.Contains(out, "2 of 4 failed: overlong") {
				t.Errorf("analyze exit %d:\n%s%s", code, out, e)
			}
			out, e, code = run(t, nil, bin, "check", tr, "--claim", "requests_failed == 2")
			if code == 2 || !strings.Contains(out+e, "requests_failed") {
				t.Errorf("check exit %d:\n%s%s", code, out, e)
			}
		})
	}
}
