package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// anthropicRound sends one request with the Anthropic adapter and reads it
// with its reader, as replay does.
func anthropicRound(t *testing.T, url string, r workload.Request) (*trace.Record, error, []byte) {
	t.Helper()
	req, err := endpoint.Anthropic{}.NewRequest(context.Background(), url, &r, endpoint.Options{Model: "m", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := newClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	start := time.Now()
	rec := &trace.Record{}
	err = endpoint.Anthropic{}.Read(bytes.NewReader(body), func() int64 { return int64(time.Since(start)) }, rec)
	return rec, err, body
}

// TestAnthropicServed: the simulator speaks the Messages stream in the
// documented event order, with the prompt's token count as input_tokens,
// the output count in message_delta, and stop_reason max_tokens; the
// project's own reader reads it back whole.
func TestAnthropicServed(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	const n = 9
	r := workload.Request{ID: "a", MaxTokens: n, Messages: []workload.Message{{Role: "system", Content: "hello"}, {Role: "user", Content: " there"}}}
	rec, err, body := anthropicRound(t, s.URL(), r)
	if err != nil {
		t.Fatalf("read: %v\n%s", err, body)
	}
	text := ""
	for _, c := range rec.Chunks {
		text += c.Text
	}
	if want := countUpText(t, n); text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	// "hello" and " there" are one token each in o200k_base: 2 input tokens.
	if rec.FinishReason != "length" || rec.Usage != `{"input_tokens":2,"output_tokens":9}` {
		t.Errorf("finish %q usage %s", rec.FinishReason, rec.Usage)
	}
	var names []string
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok && (len(names) == 0 || names[len(names)-1] != name) {
			names = append(names, name)
		}
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("event order %v, want %v", names, want)
	}
}

// TestAnthropicErrorShapes: the simulator's errors on /v1/messages are
// Anthropic's {"type":"error","error":{"type":…,"message":…}}.
func TestAnthropicErrorShapes(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	cfg := fastCfg()
	cfg.ErrorRate = 1
	failing := startServer(t, cfg)
	for _, tc := range []struct {
		url, body, typ string
		status         int
	}{
		{s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, "invalid_request_error", 400},
		{failing.URL(), `{"model":"m","max_tokens":3,"messages":[{"role":"user","content":"hi"}],"stream":true}`, "api_error", 500},
	} {
		resp, err := newClient().Post(tc.url+"/v1/messages", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || e.Type != "error" || e.Error.Type != tc.typ || e.Error.Message == "" {
			t.Errorf("status %d error %+v, want %d %s", resp.StatusCode, e, tc.status, tc.typ)
		}
	}
}
