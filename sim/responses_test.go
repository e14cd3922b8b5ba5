package sim

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TestResponsesServed: the simulator speaks the Responses stream
// (response.created … output_text.delta … response.incomplete with
// max_output_tokens and usage), and the project's reader reads it whole.
func TestResponsesServed(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	const n = 7
	r := workload.Request{ID: "a", MaxTokens: n, Messages: []workload.Message{{Role: "user", Content: "hello there"}}}
	req, err := endpoint.OpenAIResponses{}.NewRequest(context.Background(), s.URL(), &r, endpoint.Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := newClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	start := time.Now()
	rec := &trace.Record{}
	if err := (endpoint.OpenAIResponses{}).Read(bytes.NewReader(body), func() int64 { return int64(time.Since(start)) }, rec); err != nil {
		t.Fatalf("read: %v\n%s", err, body)
	}
	text := ""
	for _, c := range rec.Chunks {
		text += c.Text
	}
	if want := countUpText(t, n); text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	// "hello there" is 2 tokens in o200k_base.
	want := `{"input_tokens":2,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":9}`
	if rec.FinishReason != "length" || rec.Usage != want {
		t.Errorf("finish %q usage %s", rec.FinishReason, rec.Usage)
	}
	if !strings.HasPrefix(string(body), "event: response.created\n") {
		t.Errorf("stream starts %.80q", body)
	}
}
