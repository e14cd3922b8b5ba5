package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// closingServer answers like llama-server: every response announces
// keep-alive, and the connection is closed right after it, so the next
// request sent on it gets FIN before any response byte. It answers the
// first request of each connection (a streamed completion, or a bare 200
// to connection pre-warming) and closes the connection as soon as a
// second request arrives on it, without answering: the request that was
// sent on a connection the server had already given up is never served.
type closingServer struct {
	ln       net.Listener
	answered atomic.Int64 // completions answered
	dropped  atomic.Int64 // requests closed on unanswered
	conns    atomic.Int64
	wg       sync.WaitGroup
}

func newClosingServer(t *testing.T) *closingServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &closingServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *closingServer) URL() string { return "http://" + s.ln.Addr().String() }

func (s *closingServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if n > 0 {
			// The server closed this connection after its last answer; the
			// request crossed the close and is never read as a request.
			s.dropped.Add(1)
			return
		}
		if req.Method != http.MethodPost {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
			continue
		}
		body := "data: {\"content\":\"1, 2\",\"stop\":false}\n\ndata: {\"content\":\"\",\"stop\":true,\"stop_type\":\"limit\"," +
			"\"timings\":{\"prompt_n\":64,\"predicted_n\":2}}\n\n"
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n%s", len(body), body)
		s.answered.Add(1)
	}
}

// TestClosedKeepAliveRetried (hostile input round 3, finding 12):
// llama-server announces keep-alive and closes every connection just
// after its response; a request the client sends on such a connection
// gets FIN before any response byte. It never reached the server, so it
// is sent again once, on a new connection, and counted as a retry (in the
// record's notes and the run's summary line), never as a server failure.
// Against a 127.0.0.1 server that never answers a second request on a
// connection, 20 sequential --api llamacpp requests all succeed, each
// retried one says so, and the summary counts them. Before the fix every
// request after the first on a kept-alive connection was recorded as
// "reset".
func TestClosedKeepAliveRetried(t *testing.T) {
	bin := parallelBinary(t)
	srv := newClosingServer(t)
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "2", "--schedule", "closed:1", "--requests", "20", "--shape", "completion")
	tr := filepath.Join(dir, "ka.trace.zst")
	o, e, code := run(t, nil, bin, "replay", wl, "--url", srv.URL(), "--api", "llamacpp", "--server-metrics", "off", "--server-tokenize", "off", "-o", tr)
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
	if len(recs) != 20 || srv.answered.Load() != 20 {
		t.Fatalf("%d records, %d answered; want 20 and 20", len(recs), srv.answered.Load())
	}
	// Every request the server dropped was retried, and counted once.
	if int64(retried) != srv.dropped.Load() || retried == 0 {
		t.Errorf("%d records say they were retried; the server dropped %d requests", retried, srv.dropped.Load())
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
