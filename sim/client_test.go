package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// event is one SSE data line or NDJSON line and when it arrived.
type event struct {
	at   time.Time
	data []byte
}

// result is what the test client saw of one streamed request.
type result struct {
	sent   time.Time
	status int
	body   []byte // non-2xx or non-stream body
	events []event
	done   bool // [DONE] seen (SSE) or done:true (NDJSON)
	err    error
	// token events: those carrying text
	first, last time.Time
	text        string
	chunks      int
}

func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}}
}

// do posts body to url+path and reads the stream to the end, timestamping
// every line right after the read that returned it.
func do(ctx context.Context, c *http.Client, url, path string, body any) *result {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	r := &result{sent: time.Now()}
	resp, err := c.Do(req)
	if err != nil {
		r.err = err
		return r
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != 200 || !(strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "application/x-ndjson")) {
		r.body, r.err = io.ReadAll(resp.Body)
		return r
	}
	sse := strings.HasPrefix(ct, "text/event-stream")
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var text strings.Builder
	for {
		line, err := br.ReadBytes('\n')
		now := time.Now()
		if err != nil {
			if err != io.EOF || len(line) > 0 {
				r.err = err
			}
			break
		}
		line = bytes.TrimRight(line, "\n")
		if len(line) == 0 {
			continue
		}
		if sse {
			if !bytes.HasPrefix(line, []byte("data: ")) {
				r.err = fmt.Errorf("bad SSE line %q", line)
				return r
			}
			line = line[len("data: "):]
			if string(line) == "[DONE]" {
				r.done = true
				continue
			}
		}
		r.events = append(r.events, event{at: now, data: append([]byte(nil), line...)})
		var m struct {
			Choices []struct {
				Delta struct{ Content string }
				Text  string
			}
			Content  *string
			Response string
			Message  struct{ Content string }
			Done     bool
			Stop     bool
		}
		if err := json.Unmarshal(line, &m); err != nil {
			r.err = fmt.Errorf("bad event JSON %q: %v", line, err)
			return r
		}
		piece := m.Response + m.Message.Content
		if m.Content != nil {
			piece += *m.Content
		}
		for _, c := range m.Choices {
			piece += c.Delta.Content + c.Text
		}
		if m.Done || m.Stop {
			r.done = true
		}
		if piece != "" {
			if r.first.IsZero() {
				r.first = now
			}
			r.last = now
			r.chunks++
			text.WriteString(piece)
		}
	}
	r.text = text.String()
	return r
}

// promptOfTokens returns a text of about n tokens (exactly n when the
// filler words are one token each, as in o200k_base) that starts with tag,
// so prompts with different tags share no prefix-cache block.
func promptOfTokens(t testing.TB, tag string, n int) string {
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing matches")
	k := n
	for {
		var b strings.Builder
		b.WriteString(tag)
		for i := 0; i < k; i++ {
			b.WriteString(" ")
			b.WriteString(words[i%len(words)])
		}
		c := tok.Count(b.String())
		if c <= n || k == 0 {
			return b.String()
		}
		k -= c - n
		if k < 0 {
			k = 0
		}
	}
}

// countUpText is the expected answer of n tokens.
func countUpText(t testing.TB, n int) string {
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	c := &countUp{tok: tok}
	return c.text(n)
}
