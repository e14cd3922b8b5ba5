package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// llamaStream is a llama-server completion stream answering "1, 2".
const llamaStream = "data: {\"content\":\"1, 2\",\"stop\":false}\n\ndata: {\"content\":\"\",\"stop\":true,\"stop_type\":\"limit\"," +
	"\"timings\":{\"prompt_n\":64,\"predicted_n\":2}}\n\n"

// TestClosedKeepAliveRetried: llama-server announces keep-alive and closes
// every connection just after its response; a request the client sends on
// such a connection gets FIN before any response byte. It never reached the
// server, so it is sent again once, on a new connection, and counted as a
// retry (in the record's notes and the run's summary line), never as a
// server failure. Against a 127.0.0.1 server that never answers a second
// request on a connection, 20 sequential --api llamacpp requests all
// succeed, each retried one says so, and the summary counts them. Before the
// fix every request after the first on a kept-alive connection was recorded
// as "reset".
func TestClosedKeepAliveRetried(t *testing.T) {
	bin := parallelBinary(t)
	srv := testutil.StartKeepAliveCloser(t, llamaStream, true)
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "2", "--schedule", "closed:1", "--requests", "20", "--shape", "completion")
	tr := filepath.Join(dir, "ka.trace.zst")
	o, e, code := run(t, nil, bin, "replay", wl, "--url", srv.URL, "--api", "llamacpp", "--server-metrics", "off", "--server-tokenize", "off", "-o", tr)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, o, e)
	}
	_, recs := readTrace(t, tr)
	retried := 0
	for _, r := range recs {
		if r.Error != nil {
			t.Errorf("request %s failed: %s %s (notes %q)", r.ID, r.Error.Class, r.Error.Message, r.Notes)
		}
		if strings.Contains(r.Notes, "retried once on a new connection") {
			retried++
		}
	}
	if len(recs) != 20 || srv.Answered.Load() != 20 {
		t.Fatalf("%d records, %d answered; want 20 and 20", len(recs), srv.Answered.Load())
	}
	// Every request the server dropped was retried, and counted once.
	if int64(retried) != srv.Dropped.Load() || retried == 0 {
		t.Errorf("%d records say they were retried; the server dropped %d requests", retried, srv.Dropped.Load())
	}
	m := regexp.MustCompile(`20 requests sent, 20 ok, 0 failed, (\d+) retried on a new connection`).FindStringSubmatch(e)
	if m == nil {
		t.Fatalf("the summary does not count the retries:\n%s", e)
	}
	if n, _ := strconv.Atoi(m[1]); n != retried {
		t.Errorf("the summary counts %d retries, the records %d", n, retried)
	}
	if strings.Contains(e, "reset") {
		t.Errorf("stderr speaks of resets:\n%s", e)
	}
}
