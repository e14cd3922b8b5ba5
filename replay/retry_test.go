package replay

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// keepAliveCloser answers like llama-server: keep-alive announced, the
// connection closed after the response. It answers the first request of
// each connection (completions only when answerPOST) and closes the
// connection when the next one arrives on it, without an answer.
type keepAliveCloser struct {
	ln         net.Listener
	answerPOST bool
	answered   atomic.Int64 // completions answered
	dropped    atomic.Int64 // requests closed on unanswered
	// droppedPOST counts the completions among them: the warm-up's GETs
	// can land second on a connection too, and are no request's retry.
	droppedPOST atomic.Int64
	wg          sync.WaitGroup
}

func startKeepAliveCloser(t *testing.T, answerPOST bool) *keepAliveCloser {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &keepAliveCloser{ln: ln, answerPOST: answerPOST}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					if i > 0 || r.Method == http.MethodPost && !s.answerPOST {
						s.dropped.Add(1)
						if r.Method == http.MethodPost {
							s.droppedPOST.Add(1)
						}
						return // FIN before any response byte
					}
					if r.Method != http.MethodPost {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
						continue
					}
					body := goodStream
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
					s.answered.Add(1)
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// runSequential sends n requests one after another to srv.
func runSequential(t *testing.T, srv *keepAliveCloser, n int) (*Summary, []trace.Record) {
	t.Helper()
	wl := handWorkload(workload.Phase{Kind: workload.KindClosed, Concurrency: 1, Requests: n})
	cfg := baseConfig(t, wl, "http://"+srv.ln.Addr().String())
	cfg.Model, cfg.ServerMetrics, cfg.ServerTokenize = "m", ServerMetricsOff, ServerTokenizeOff
	return runRead(t, cfg)
}

// runRead runs cfg, failing the test if the run fails as a whole, and
// returns its summary and the records of its trace.
func runRead(t *testing.T, cfg Config) (*Summary, []trace.Record) {
	t.Helper()
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := readTrace(t, cfg.Trace)
	return sum, recs
}

// TestRetryClosedKeepAlive: a request sent on a kept-alive connection the
// server had closed gets FIN before any response byte; it is sent once
// more on a new connection, with a note and the summary's count, and
// succeeds. Requests on connections of their own are never retried.
func TestRetryClosedKeepAlive(t *testing.T) {
	srv := startKeepAliveCloser(t, true)
	sum, recs := runSequential(t, srv, 12)
	notes := 0
	for _, r := range recs {
		if r.Error != nil {
			t.Errorf("%s failed: %v", r.ID, r.Error)
		}
		if strings.Contains(r.Notes, "retried once on a new connection") {
			notes++
			if r.Sent < r.Scheduled {
				t.Errorf("%s: sent %d before scheduled %d", r.ID, r.Sent, r.Scheduled)
			}
		}
	}
	if sum.OK != 12 || sum.Failed != 0 || srv.answered.Load() != 12 {
		t.Fatalf("summary %q, %d answered", sum, srv.answered.Load())
	}
	if int64(sum.Retried) != srv.dropped.Load() || notes != sum.Retried || sum.Retried == 0 {
		t.Errorf("%d retried, %d notes, %d dropped by the server", sum.Retried, notes, srv.dropped.Load())
	}
	if !strings.Contains(sum.String(), "retried on a new connection") {
		t.Errorf("summary %q does not count the retries", sum)
	}
}

// TestRetryOnceOnly: when the new connection is closed before an answer
// too, the request is the server's failure (reset), retried once and no
// more; a request on a fresh connection that is closed is never retried.
func TestRetryOnceOnly(t *testing.T) {
	srv := startKeepAliveCloser(t, false) // answers connection pre-warming only
	sum, recs := runSequential(t, srv, 3)
	retried := 0
	for _, r := range recs {
		if r.Error == nil || r.Error.Class != trace.ErrReset {
			t.Errorf("%s: error %v, want reset", r.ID, r.Error)
		}
		if strings.Contains(r.Notes, "retried once") {
			retried++
		}
	}
	// Only a request on the pre-warmed (reused) connection is retried; the
	// others, and the retry, went out on connections of their own. Each
	// request reached the server at most twice.
	if sum.Failed != 3 || sum.Retried != retried || retried > 1 || srv.dropped.Load() != int64(3+retried) {
		t.Errorf("summary %q, %d retried notes, %d dropped", sum, retried, srv.dropped.Load())
	}
}
