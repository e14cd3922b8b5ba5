package testutil

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// KeepAliveCloser answers like llama-server: every response announces
// keep-alive, and the connection is closed right after it, so the next
// request sent on it gets FIN before any response byte. It answers the
// first request of each connection (a completion with its body when
// answerPOST, a bare 200 to connection pre-warming) and closes the
// connection as soon as a second request arrives on it, without
// answering: the request that crossed the close is never served.
type KeepAliveCloser struct {
	URL      string
	Answered atomic.Int64 // completions answered
	Dropped  atomic.Int64 // requests closed on unanswered
	// DroppedPOST counts the completions among them: pre-warming's GETs
	// can land second on a connection too, and are no request's retry.
	DroppedPOST atomic.Int64
	body        string
	answerPOST  bool
}

// StartKeepAliveCloser serves until the test ends; body is the event
// stream a completion is answered with.
func StartKeepAliveCloser(t testing.TB, body string, answerPOST bool) *KeepAliveCloser {
	t.Helper()
	s := &KeepAliveCloser{body: body, answerPOST: answerPOST}
	s.URL = "http://" + ServeConns(t, s.serve)
	return s
}

func (s *KeepAliveCloser) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if n > 0 || req.Method == http.MethodPost && !s.answerPOST {
			// The server closed this connection after its last answer (or
			// never answers completions); the request is never served.
			s.Dropped.Add(1)
			if req.Method == http.MethodPost {
				s.DroppedPOST.Add(1)
			}
			return
		}
		if req.Method != http.MethodPost {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
			continue
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n%s", len(s.body), s.body)
		s.Answered.Add(1)
	}
}
