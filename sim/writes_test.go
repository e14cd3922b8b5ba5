package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the writes of every connection it accepts: each
// is one write system call on the socket, one segment on the wire.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// TestStreamWrites counts the simulator's writes for one paced stream of
// n tokens per API: the headers, then one write per token (the events that
// open a stream, such as a chat's role delta, leave with the first token),
// then one for everything after the last token (usage, [DONE], the
// Anthropic and Responses closing events, the end of the chunked body):
// n+2 in all. Each flushed event used to be a write of its own, and a
// wake-up and a read on the client, in the first and last ticks of a
// burst of streams, where section 3 of the selftest found the client a
// pace behind. Counts only, no times.
func TestStreamWrites(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		path string
		body map[string]any
		end  string // the body's last event
	}{
		{"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "max_tokens": n,
			"messages":       []map[string]string{{"role": "user", "content": "hi"}},
			"stream_options": map[string]any{"include_usage": true}}, "data: [DONE]"},
		{"/v1/completions", map[string]any{"model": "m", "stream": true, "max_tokens": n, "prompt": "hi"}, "data: [DONE]"},
		{"/v1/messages", map[string]any{"model": "m", "stream": true, "max_tokens": n,
			"messages": []map[string]string{{"role": "user", "content": "hi"}}}, "event: message_stop"},
		{"/v1/responses", map[string]any{"model": "m", "stream": true, "max_output_tokens": n, "input": "hi"}, "event: response.incomplete"},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/v1/"), func(t *testing.T) {
			s, err := New(Config{Profile: mustProfile(t, "fast"), TokenInterval: time.Millisecond, SendTimes: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cl := &countingListener{Listener: ln}
			srv := &http.Server{Handler: s.Handler()}
			go srv.Serve(cl)
			defer srv.Close()
			b, _ := json.Marshal(tc.body)
			resp, err := http.Post("http://"+ln.Addr().String()+tc.path, "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), tc.end) || strings.Count(string(body), "sim_sent_unix_ns") < n {
				t.Fatalf("stream: status %d, err %v, body:\n%s", resp.StatusCode, err, body)
			}
			// The handler has returned once the body ended; its last write
			// is counted before the client saw the end.
			if got := cl.writes.Load(); got != n+2 {
				t.Errorf("%d writes for a stream of %d tokens, want %d (headers, one per token, one after the last)", got, n, n+2)
			}
		})
	}
}
