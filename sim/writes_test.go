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

// TestUnpacedTokensShareWrites: unpaced, with every token ready at once
// (the fast profile), the first token leaves at once and the rest in
// writes of up to maxBatch events; every event of one write carries the
// same send time, the one taken right before that write, and the times
// never go back. Counts and equalities only, no durations.
func TestUnpacedTokensShareWrites(t *testing.T) {
	const n = 20
	s, err := New(Config{Profile: mustProfile(t, "fast"), SendTimes: true})
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
	b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "max_tokens": n,
		"messages": []map[string]string{{"role": "user", "content": "hi"}}})
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, err %v", resp.StatusCode, err)
	}
	// headers; the role delta with token 1; tokens 2–9, 10–17, 18–20;
	// [DONE] with the end of the body.
	if got, want := cl.writes.Load(), int64(6); got != want {
		t.Errorf("%d writes for %d ready tokens, want %d", got, n, want)
	}
	var stamps []int64
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Sent    int64 `json:"sim_sent_unix_ns"`
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Sent == 0 {
			t.Fatalf("event %q: %v", data, err)
		}
		if len(ev.Choices) == 1 && ev.Choices[0].Delta.Content != "" {
			stamps = append(stamps, ev.Sent)
		}
	}
	if len(stamps) != n {
		t.Fatalf("%d content events, want %d", len(stamps), n)
	}
	for i := 1; i < n; i++ {
		if stamps[i] < stamps[i-1] {
			t.Errorf("token %d sent at %d, before token %d at %d", i+1, stamps[i], i, stamps[i-1])
		}
	}
	// One write, one time: tokens 2–9 share theirs, and so do 10–17.
	for _, g := range [][2]int{{1, 8}, {9, 16}, {17, 19}} {
		for i := g[0]; i <= g[1]; i++ {
			if stamps[i] != stamps[g[0]] {
				t.Errorf("token %d stamped %d, token %d of the same write %d", i+1, stamps[i], g[0]+1, stamps[g[0]])
			}
		}
	}
}

// TestSendStampsWidth: a stamp is rewritten in place only with a time of
// its own width, so a clock reading past a power of ten cannot shift the
// event's bytes.
func TestSendStampsWidth(t *testing.T) {
	out := []byte(`{"a":1,"sim_sent_unix_ns":1000000000000000000}` + "\n")
	at := strings.Index(string(out), "1000000000000000000")
	sendStamps(out, []int{at}, 1796540796013413963)
	if want := `{"a":1,"sim_sent_unix_ns":1796540796013413963}` + "\n"; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	sendStamps(out, []int{at}, 999999999999999999) // 18 digits
	if want := `{"a":1,"sim_sent_unix_ns":1796540796013413963}` + "\n"; string(out) != want {
		t.Errorf("a shorter time rewrote the stamp: %s", out)
	}
}
