//go:build unix

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fragmentKey is the 34-character sk-… key of the findings.
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

// TestSecretFragmentsNeverWritten (hostile-server findings 6, 7 and 8): a
// key split across two streamed chunks, a message the server clipped in the
// middle of the key, an error body the client clips at 4 KiB across the
// key, a \u-escaped key in an error event, a model list naming the model
// after the key, and a 401 whose status line carries it. Through the built
// binary: no 12-byte piece of the key reaches the trace (compressed or
// not), trace cat/info, analyze, stdout or stderr.
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				http.ReadRequest(br)
				fmt.Fprintf(c, "HTTP/1.1 401 Unauthorized %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", fragmentKey)
			}()
		}
	}()
	out, e, code = run(t, env, bin, "replay", wl, "--url", "http://"+ln.Addr().String(), "--api-key-env", "LLMREPLAY_FRAGMENT_KEY", "-o", filepath.Join(dir, "d.trace.zst"))
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
