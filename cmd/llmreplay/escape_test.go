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
	"testing"
)

// hostileID is issue #11 finding 10's model id: it clears the screen, sets
// the terminal title and adds a fake result line when printed raw.
const hostileID = "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r"

// TestServerStringsEscaped: a server whose model id and finish_reason are
// hostile; bench, trace info and analyze (table and Markdown) and the
// bench's .md file show them escaped, while the trace keeps them raw.
// Before the fix each printed them raw.
func TestServerStringsEscaped(t *testing.T) {
	bin := parallelBinary(t)
	idJSON, _ := json.Marshal(hostileID)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet && r.URL.Path != "/v1/models" {
			return
		}
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model"}]}`, idJSON)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(w, "data: {\"model\":%s,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d, \"},\"finish_reason\":null}]}\n\n", idJSON, i)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%s}]}\n\ndata: [DONE]\n\n", idJSON)
	}))
	defer srv.Close()
	dir := t.TempDir()
	check := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Errorf("%s printed a raw control character: %q", what, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "FAKE LINE") {
				t.Errorf("%s printed the fake line on its own: %q", what, out)
			}
		}
	}
	o, e, code := run(t, nil, bin, "bench", "--url", srv.URL, "--results", dir, "--max-tokens", "4")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, o, e)
	}
	check("bench", o+e)
	if !strings.Contains(o, `evil\x1b[2J`) {
		t.Errorf("bench does not show the escaped model id: %q", o)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.trace.zst"))
	mds, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(traces) != 1 || len(mds) != 1 {
		t.Fatalf("bench left %v and %v", traces, mds)
	}
	md, _ := os.ReadFile(mds[0])
	check("the bench .md", string(md))
	// Every row of the Markdown table has as many cell separators as its
	// header: the model id's text cannot add cells or rows.
	cells := -1
	for _, l := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		n := strings.Count(l, "|") - strings.Count(l, `\|`)
		if cells < 0 {
			cells = n
		} else if n != cells {
			t.Errorf("a table row has %d separators, the header %d: %q", n, cells, l)
		}
	}
	for _, args := range [][]string{
		{"trace", "info", traces[0]},
		{"analyze", traces[0]},
		{"analyze", "--format", "markdown", traces[0]},
	} {
		o, e, code := run(t, nil, bin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		check(strings.Join(args[:2], " "), o+e)
		if !strings.Contains(o, `evil\x1b[2J`) {
			t.Errorf("%v does not show the escaped model id: %q", args, o)
		}
	}
	// The trace keeps the raw value.
	o, _, _ = run(t, nil, bin, "trace", "cat", traces[0])
	if !strings.Contains(o, string(idJSON[1:len(idJSON)-1])) {
		t.Errorf("trace cat lost the raw model id: %.300q", o)
	}
}
