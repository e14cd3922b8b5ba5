package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// requestFor is an n-token request in the shape api takes: messages for the
// chat APIs, a raw prompt for the others.
func requestFor(api string, n int) workload.Request {
	r := workload.Request{ID: "a", MaxTokens: n}
	switch api {
	case "openai-chat", "ollama-chat", "anthropic", "openai-responses":
		r.Messages = []workload.Message{{Role: "system", Content: "hello"}, {Role: "user", Content: " there"}}
	default:
		r.Prompt = "hello there"
	}
	return r
}

// through sends r to the simulator at url with replay's adapter for api and
// reads the answer with the same adapter, as replay does.
func through(t *testing.T, url, api string, r workload.Request) (*trace.Record, []byte) {
	t.Helper()
	ep, err := endpoint.Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	req, err := ep.NewRequest(context.Background(), url, &r, endpoint.Options{Model: "m", APIKey: "k"})
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
		t.Fatalf("%s: status %d: %s", api, resp.StatusCode, body)
	}
	return readBack(ep, body, r.MaxTokens), body
}

// readBack reads a whole body with ep's reader; its error is the record's.
func readBack(ep endpoint.Endpoint, body []byte, maxTokens int) *trace.Record {
	var clock int64
	rec := &trace.Record{MaxTokens: maxTokens}
	if err := ep.Read(bytes.NewReader(body), func() int64 { clock++; return clock }, rec); err != nil {
		rec.Error = &trace.Error{Class: trace.ErrMalformed, Message: err.Error()}
	}
	return rec
}

// answer is a record's text and reasoning, each joined over its chunks.
func answer(rec *trace.Record) (text, reasoning string) {
	for _, c := range rec.Chunks {
		text += c.Text
		reasoning += c.Reasoning
	}
	return text, reasoning
}

// TestAnthropicServed: the simulator speaks the Messages stream in the
// documented event order, with the prompt's token count as input_tokens,
// the output count in message_delta, and stop_reason max_tokens; the
// project's own reader reads it back whole.
func TestAnthropicServed(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	const n = 9
	rec, body := through(t, s.URL(), "anthropic", requestFor("anthropic", n))
	if text, _ := answer(rec); rec.Error != nil || text != countUpText(t, n) {
		t.Errorf("error %v, text %q, want %q", rec.Error, text, countUpText(t, n))
	}
	// "hello" and " there" are one token each in o200k_base: 2 input tokens.
	if rec.FinishReason != "length" || rec.Usage != `{"input_tokens":2,"output_tokens":9}` {
		t.Errorf("finish %q usage %s", rec.FinishReason, rec.Usage)
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if got := eventNames(body); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("event order %v, want %v", got, want)
	}
}

// eventNames lists a stream's SSE event names, runs of one name as one.
func eventNames(body []byte) []string {
	var names []string
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok && (len(names) == 0 || names[len(names)-1] != name) {
			names = append(names, name)
		}
	}
	return names
}

// TestResponsesServed: the simulator speaks the Responses stream
// (response.created … output_text.delta … response.incomplete with
// max_output_tokens and usage), and the project's reader reads it whole.
func TestResponsesServed(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	const n = 7
	r := requestFor("openai-responses", n)
	r.Messages = []workload.Message{{Role: "user", Content: "hello there"}}
	rec, body := through(t, s.URL(), "openai-responses", r)
	if text, _ := answer(rec); rec.Error != nil || text != countUpText(t, n) {
		t.Errorf("error %v, text %q, want %q", rec.Error, text, countUpText(t, n))
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

// TestReasoningServed: with ReasoningTokens R, every API that streams
// reasoning apart (chat, Anthropic, Responses, Ollama) sends the first R
// tokens of the count-up as reasoning and the rest as the answer, in a
// form replay's own readers take apart exactly, whether the boundary falls
// between chunks or inside one (3 tokens per chunk) and when the whole
// answer is reasoning; usage counts both. The other APIs send it all as
// answer text. Counts only, no times.
func TestReasoningServed(t *testing.T) {
	t.Parallel()
	const n = 10
	for _, tc := range []struct{ reason, perChunk int }{{4, 1}, {4, 3}, {10, 3}, {25, 1}} {
		cfg := fastCfg()
		cfg.ReasoningTokens, cfg.TokensPerChunk = tc.reason, tc.perChunk
		s := startServer(t, cfg)
		for _, api := range endpoint.Names {
			want := 0
			if api == "openai-chat" || api == "anthropic" || api == "openai-responses" || strings.HasPrefix(api, "ollama") {
				want = min(tc.reason, n)
			}
			rec, body := through(t, s.URL(), api, requestFor(api, n))
			text, reasoning := answer(rec)
			all, think := countUpText(t, n), countUpText(t, want)
			// Triton's stream has no finish field: its finish is "stop".
			if rec.Error != nil || reasoning != think || text != all[len(think):] || rec.FinishReason == "" {
				t.Errorf("%s reasoning %d, %d per chunk: error %v, finish %q, reasoning %q, text %q; want %q then %q\n%s",
					api, tc.reason, tc.perChunk, rec.Error, rec.FinishReason, reasoning, text, think, all[len(think):], body)
				continue
			}
			for i, c := range rec.Chunks {
				if c.Text != "" && c.Reasoning != "" {
					t.Errorf("%s: chunk %d holds both reasoning and text: a chunk crossing over must be two events", api, i)
				}
			}
			if api == "openai-responses" && !strings.Contains(rec.Usage, `"reasoning_tokens":`+itoa(want)) {
				t.Errorf("%s usage %s, want reasoning_tokens %d", api, rec.Usage, want)
			}
			if api == "anthropic" && !strings.Contains(rec.Usage, `"output_tokens":`+itoa(n)) {
				t.Errorf("%s usage %s, want output_tokens %d (reasoning included)", api, rec.Usage, n)
			}
		}
	}
}

// TestReasoningNotStreamed: a request that asks for no stream gets the
// reasoning in the API's whole-response form (a message's
// reasoning_content or thinking, a thinking block, a reasoning item), and
// replay's reader, which reads such a body as one chunk, keeps it apart
// from the answer.
func TestReasoningNotStreamed(t *testing.T) {
	t.Parallel()
	const n, reason = 10, 4
	cfg := fastCfg()
	cfg.ReasoningTokens = reason
	s := startServer(t, cfg)
	msgs := []map[string]string{{"role": "user", "content": "hi"}}
	for _, tc := range []struct {
		api, path string
		body      map[string]any
	}{
		{"openai-chat", "/v1/chat/completions", map[string]any{"model": "m", "messages": msgs, "max_tokens": n, "stream": false}},
		{"anthropic", "/v1/messages", map[string]any{"model": "m", "messages": msgs, "max_tokens": n}},
		{"openai-responses", "/v1/responses", map[string]any{"model": "m", "input": "hi", "max_output_tokens": n}},
		{"ollama-chat", "/api/chat", map[string]any{"model": "m", "messages": msgs, "options": map[string]any{"num_predict": n}, "stream": false}},
		{"ollama-generate", "/api/generate", map[string]any{"model": "m", "prompt": "hi", "options": map[string]any{"num_predict": n}, "stream": false}},
	} {
		r := do(context.Background(), newClient(), s.URL(), tc.path, tc.body)
		ep, _ := endpoint.Lookup(tc.api)
		rec := readBack(ep, r.body, n)
		text, reasoning := answer(rec)
		all, think := countUpText(t, n), countUpText(t, reason)
		if r.status != 200 || rec.Error != nil || len(rec.Chunks) != 1 || reasoning != think || text != all[len(think):] {
			t.Errorf("%s: status %d, error %v, %d chunks, reasoning %q, text %q; want one chunk, %q then %q\n%s",
				tc.api, r.status, rec.Error, len(rec.Chunks), reasoning, text, think, all[len(think):], r.body)
		}
	}
}

// TestPacedChunks: with several tokens per chunk, every route (the native
// ones as the OpenAI ones) writes each chunk once the engine has made its
// tokens, never before, and goes on writing while the engine is still
// making the rest, rather than holding chunks to the end. Checked on the
// model's counters: for each content write, the tokens it carries through
// and the tokens the engine had made. The steps are long (20 ms) so the
// stream lasts a quarter of a second and the writer has every chance to
// run between steps even on a busy machine.
func TestPacedChunks(t *testing.T) {
	t.Parallel()
	const n, per = 12, 3
	slow := Profile{Name: "slow", StepBase: 20 * time.Millisecond}
	for _, name := range endpoint.Names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			type write struct{ through, made int }
			var (
				mu     sync.Mutex
				writes []write
			)
			s, err := New(Config{Profile: slow, TokensPerChunk: per, DisablePrefixCache: true})
			if err != nil {
				t.Fatal(err)
			}
			s.onChunk = func(_ api, through, made int) {
				mu.Lock()
				writes = append(writes, write{through, made})
				mu.Unlock()
			}
			if err := s.Start("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rec, _ := through(t, s.URL(), name, requestFor(name, n))
			if text, _ := answer(rec); rec.Error != nil || text != countUpText(t, n) {
				t.Fatalf("error %v, text %q", rec.Error, text)
			}
			mu.Lock()
			defer mu.Unlock()
			early := 0
			for i, w := range writes {
				if w.through != per*(i+1) || w.made < w.through {
					t.Errorf("write %d carries through token %d with %d made: want %d, never ahead of the engine", i, w.through, w.made, per*(i+1))
				}
				if w.made < n {
					early++
				}
			}
			if len(writes) != n/per || early == 0 {
				t.Errorf("%d writes, %d of them before the engine had made all %d tokens: want %d writes, paced as the tokens come (%v)", len(writes), early, n, n/per, writes)
			}
		})
	}
}
