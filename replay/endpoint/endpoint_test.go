package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// A script is what a test server sends: each piece is written and flushed
// on its own, so pieces arrive in separate reads.
type script struct {
	pieces []string
	// byteByByte writes (and flushes) every byte of every piece separately.
	byteByByte bool
	// pause before the last piece, so its arrival time is clearly later.
	pause time.Duration
	ctype string
}

type served struct {
	path   string
	auth   string
	accept string
	body   map[string]any
	// lastWrite is the clock reading just before the last piece was written.
	lastWrite int64
}

// serve starts a 127.0.0.1 server playing sc and returns its URL and a
// channel with what it saw.
func serve(t *testing.T, sc script, now func() int64) (string, <-chan served) {
	t.Helper()
	seen := make(chan served, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s served
		s.path, s.auth, s.accept = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Accept")
		if err := json.NewDecoder(r.Body).Decode(&s.body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		ct := sc.ctype
		if ct == "" {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		f := w.(http.Flusher)
		for i, p := range sc.pieces {
			if i == len(sc.pieces)-1 {
				time.Sleep(sc.pause)
				s.lastWrite = now()
			}
			if sc.byteByByte {
				for j := 0; j < len(p); j++ {
					w.Write([]byte{p[j]})
					f.Flush()
				}
			} else {
				io.WriteString(w, p)
				f.Flush()
			}
		}
		seen <- s
	}))
	t.Cleanup(srv.Close)
	return srv.URL, seen
}

func clock() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

var (
	chatReq = workload.Request{ID: "p000-0001", Messages: []workload.Message{{Role: "user", Content: "Count: 1, 2,"}},
		InputTokens: 7, MaxTokens: 16, IgnoreEOS: true}
	promptReq = workload.Request{ID: "p000-0002", Prompt: "Count: 1, 2,", InputTokens: 7, MaxTokens: 16, Temperature: 0.5}
)

// roundTrip runs one request through ep against a server playing sc.
func roundTrip(t *testing.T, ep Endpoint, sc script, r workload.Request, o Options) (*trace.Record, error, served) {
	t.Helper()
	now := clock()
	url, seen := serve(t, sc, now)
	req, err := ep.NewRequest(context.Background(), url, &r, o)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rec := &trace.Record{}
	rerr := ep.Read(resp.Body, now, rec)
	io.Copy(io.Discard, resp.Body)
	s := <-seen
	checkInvariants(t, rec, rerr)
	return rec, rerr, s
}

// checkInvariants holds for every Read: times in order, every chunk
// carries something, success means a finish reason, and failures are
// classified.
func checkInvariants(t *testing.T, rec *trace.Record, err error) {
	t.Helper()
	var prev int64
	for i, c := range rec.Chunks {
		if c.T < prev {
			t.Errorf("chunk %d at %d before the previous one at %d", i, c.T, prev)
		}
		prev = c.T
		if c.Bytes <= 0 {
			t.Errorf("chunk %d has %d bytes", i, c.Bytes)
		}
	}
	if err == nil && rec.FinishReason == "" {
		t.Errorf("success without a finish reason")
	}
	var te *trace.Error
	if err != nil && errors.As(err, &te) {
		if te.Message == "" || strings.ContainsAny(te.Message, "\n\r") {
			t.Errorf("error message %q: want one non-empty line", te.Message)
		}
	}
}

func sse(objs ...string) string {
	var b strings.Builder
	for _, o := range objs {
		b.WriteString("data: " + o + "\n\n")
	}
	return b.String()
}

const (
	roleChunk   = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	emptyChunk  = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":null}]}`
	finishChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
	usageChunk  = `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":7,"total_tokens":10,"completion_tokens":3}}`
	done        = "data: [DONE]\n\n"
)

func tok(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func ctok(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c1","object":"text_completion","choices":[{"index":0,"text":` + string(b) + `,"finish_reason":null}]}`
}

type wantChunk struct {
	Text, Reasoning string
	Tokens          int
	ServerT         int64
}

func chunksOf(rec *trace.Record) []wantChunk {
	var out []wantChunk
	for _, c := range rec.Chunks {
		out = append(out, wantChunk{c.Text, c.Reasoning, c.Tokens, c.ServerT})
	}
	return out
}

type readCase struct {
	name   string
	sc     script
	want   []wantChunk
	finish string
	class  trace.ErrorClass // "" for success
	usage  string           // substring of rec.Usage
	timing string           // substring of rec.Timings
	msg    string           // substring of the error message
}

func runCases(t *testing.T, ep Endpoint, r workload.Request, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err, _ := roundTrip(t, ep, tc.sc, r, Options{Model: "m"})
			if diff := cmp.Diff(tc.want, chunksOf(rec)); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			if rec.FinishReason != tc.finish {
				t.Errorf("finish reason %q, want %q", rec.FinishReason, tc.finish)
			}
			var te *trace.Error
			switch {
			case tc.class == "" && err != nil:
				t.Errorf("Read: %v", err)
			case tc.class != "" && !errors.As(err, &te):
				t.Errorf("Read: %v, want a %s *trace.Error", err, tc.class)
			case tc.class != "" && te.Class != tc.class:
				t.Errorf("Read: class %s (%v), want %s", te.Class, err, tc.class)
			case tc.msg != "" && !strings.Contains(te.Message, tc.msg):
				t.Errorf("Read: message %q lacks %q", te.Message, tc.msg)
			}
			if !strings.Contains(rec.Usage, tc.usage) {
				t.Errorf("usage %q lacks %q", rec.Usage, tc.usage)
			}
			if !strings.Contains(rec.Timings, tc.timing) {
				t.Errorf("timings %q lacks %q", rec.Timings, tc.timing)
			}
		})
	}
}

func TestOpenAIChatRead(t *testing.T) {
	full := []string{sse(roleChunk), sse(tok("1")), sse(tok(",")), sse(tok(" 2")), sse(finishChunk), sse(usageChunk), done}
	// The role-only delta is a chunk without text, then the three tokens,
	// the finish and the usage.
	three := []wantChunk{{}, {Text: "1"}, {Text: ","}, {Text: " 2"}, {}, {}}
	crlf := strings.ReplaceAll(strings.Join(full, ""), "\n", "\r\n")
	cr := strings.ReplaceAll(strings.Join(full, ""), "\n", "\r")
	cases := []readCase{
		{name: "vLLM shape", sc: script{pieces: full}, want: three, finish: "length", usage: `"completion_tokens":3`},
		{name: "several tokens in one write", sc: script{pieces: []string{sse(roleChunk, tok("1"), tok(","), tok(" 2")), sse(finishChunk, usageChunk) + done}},
			want: three, finish: "length", usage: `"completion_tokens":3`},
		{name: "each byte its own write", sc: script{pieces: full, byteByByte: true}, want: three, finish: "length", usage: `"prompt_tokens":7`},
		{name: "CRLF", sc: script{pieces: []string{crlf}}, want: three, finish: "length"},
		{name: "CR", sc: script{pieces: []string{cr}}, want: three, finish: "length"},
		{name: "CRLF split between writes", sc: script{pieces: splitEvery(crlf, 7)}, want: three, finish: "length"},
		{name: "comments, event and id lines", sc: script{pieces: []string{": keep-alive\n\n", "event: message\nid: 1\ndata: " + tok("1") + "\n\n",
			": ping\n", "retry: 100\ndata:" + finishChunk + "\n\n", done}}, want: []wantChunk{{Text: "1"}, {}}, finish: "length"},
		{name: "TGI: no space after data:", sc: script{pieces: []string{"data:" + tok("a") + "\n\ndata:" + finishChunk + "\n\n"}}, want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
		{name: "a role-only delta is a chunk without text, an empty delta none", sc: script{pieces: []string{sse(roleChunk, emptyChunk, tok("x"), emptyChunk, finishChunk) + done}},
			want: []wantChunk{{}, {Text: "x"}, {}}, finish: "length"},
		{name: "role without content", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"role":"assistant"}}]}`, `{"choices":[{"delta":{"role":null}}]}`, tok("x"), finishChunk)}},
			want: []wantChunk{{}, {Text: "x"}, {}}, finish: "length"},
		{name: "usage only at the end", sc: script{pieces: []string{sse(tok("a"), tok("b")), sse(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`), sse(usageChunk), done}},
			want: []wantChunk{{Text: "a"}, {Text: "b"}, {}, {}}, finish: "stop", usage: `"total_tokens":10`},
		{name: "no [DONE] but a finish reason", sc: script{pieces: []string{sse(tok("a"), finishChunk)}}, want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
		{name: "[DONE] without finish reason", sc: script{pieces: []string{sse(tok("a")), done}}, want: []wantChunk{{Text: "a"}},
			class: trace.ErrIncomplete, msg: "[DONE] after 1 events without a finish_reason"},
		{name: "ends without finish reason", sc: script{pieces: []string{sse(tok("a"), tok("b"))}}, want: []wantChunk{{Text: "a"}, {Text: "b"}},
			class: trace.ErrIncomplete, msg: "end of the body"},
		{name: "empty body", sc: script{}, class: trace.ErrIncomplete, msg: "before its first event"},
		{name: "error object mid-stream", sc: script{pieces: []string{sse(tok("a")), sse(`{"error":{"message":"KV cache\nexhausted","type":"server_error","code":500}}`)}},
			want: []wantChunk{{Text: "a"}}, class: trace.ErrServer, msg: "KV cache exhausted"},
		{name: "vLLM error response in the stream", sc: script{pieces: []string{sse(tok("a")), sse(`{"object":"error","message":"too long","type":"BadRequestError","code":400}`)}},
			want: []wantChunk{{Text: "a"}}, class: trace.ErrServer, msg: "too long"},
		{name: "TGI error string", sc: script{pieces: []string{sse(`{"error":"Input validation error","error_type":"validation"}`)}},
			class: trace.ErrServer, msg: "Input validation error"},
		{name: "event: error with a JSON error", sc: script{pieces: []string{"event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n"}},
			class: trace.ErrServer, msg: "stream: overloaded"},
		{name: "event: error", sc: script{pieces: []string{sse(tok("a")), "event: error\ndata: upstream overloaded\n\n"}},
			want: []wantChunk{{Text: "a"}}, class: trace.ErrServer, msg: "upstream overloaded"},
		{name: "data that is not JSON", sc: script{pieces: []string{sse(tok("a")), "data: hello there\n\n"}}, want: []wantChunk{{Text: "a"}},
			class: trace.ErrMalformed, msg: "not JSON"},
		{name: "JSON of the wrong shape", sc: script{pieces: []string{sse(`{"choices":"a"}`)}}, class: trace.ErrMalformed, msg: "choices is not an array"},
		{name: "content of the wrong type", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"content":5}}]}`)}}, class: trace.ErrMalformed, msg: "content is not a string"},
		{name: "a JSON array", sc: script{pieces: []string{sse(`[1,2]`)}}, class: trace.ErrMalformed, msg: "not an object"},
		{name: "truncated JSON", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"content":"a"}}`)}}, class: trace.ErrMalformed, msg: "not JSON"},
		{name: "cut inside the last event", sc: script{pieces: []string{sse(tok("a")), `data: {"choices":[{"del`}}, want: []wantChunk{{Text: "a"}},
			class: trace.ErrIncomplete, msg: "inside an event"},
		{name: "last event lacks its blank line", sc: script{pieces: []string{sse(tok("a")), "data: " + finishChunk + "\n"}}, want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
		{name: "invalid UTF-8 and NUL kept", sc: script{pieces: []string{"data: {\"choices\":[{\"delta\":{\"content\":\"a\x00b\xff\\u0000\"}}]}\n\n", sse(finishChunk)}},
			want: []wantChunk{{Text: "a\x00b\xff\x00"}, {}}, finish: "length"},
		{name: "reasoning kept apart", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"reasoning_content":"think"}}]}`,
			`{"choices":[{"delta":{"reasoning":"more","reasoning_content":"more"}}]}`, tok("answer"), finishChunk)}},
			want: []wantChunk{{Reasoning: "think"}, {Reasoning: "more"}, {Text: "answer"}, {}}, finish: "length"},
		{name: "continuous usage stats", sc: script{pieces: []string{sse(
			`{"choices":[{"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":7,"completion_tokens":0,"total_tokens":7}}`,
			`{"choices":[{"delta":{"content":"ab"}}],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`,
			`{"choices":[{"delta":{"content":""}}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`,
			`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`,
			`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`) + done}},
			want: []wantChunk{{}, {Text: "ab", Tokens: 2}, {Tokens: 1}, {}, {}}, finish: "stop", usage: `"completion_tokens":3`},
		{name: "usage with the finish is the total, not the chunk's", sc: script{pieces: []string{sse(tok("a"), tok("b"),
			`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":2}}`)}},
			want: []wantChunk{{Text: "a"}, {Text: "b"}, {}}, finish: "stop", usage: `"completion_tokens":2`},
		{name: "empty finish_reason is not a finish", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"content":"a"},"finish_reason":""}]}`)}},
			want: []wantChunk{{Text: "a"}}, class: trace.ErrIncomplete},
		{name: "simulator send times", sc: script{pieces: []string{sse(`{"choices":[{"delta":{"content":"a"}}],"sim_sent_unix_ns":1733140000123456789}`,
			`{"sim_sent_unix_ns":1733140000223456789,"choices":[{"delta":{},"finish_reason":"stop"}]}`)}},
			want: []wantChunk{{Text: "a", ServerT: 1733140000123456789}, {ServerT: 1733140000223456789}}, finish: "stop"},
		{name: "llama.cpp timings in the last chunk", sc: script{pieces: []string{sse(tok("a"),
			`{"choices":[{"delta":{},"finish_reason":"stop"}],"timings":{"prompt_n":7,"predicted_n":1,"predicted_ms":12.5}}`)}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "stop", timing: `"predicted_ms":12.5`},
		{name: "non-streamed response", sc: script{ctype: "application/json", pieces: []string{
			`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"1, 2, 3","reasoning_content":null},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`}},
			want: []wantChunk{{Text: "1, 2, 3"}}, finish: "length", usage: `"completion_tokens":3`},
		{name: "non-streamed, pretty-printed", sc: script{ctype: "application/json", pieces: []string{
			"{\n  \"object\": \"chat.completion\",\n  \"choices\": [\n    {\n      \"message\": {\"content\": \"1, 2\"},\n      \"finish_reason\": \"stop\"\n    }\n  ],\n  \"usage\": {\"completion_tokens\": 2}\n}\n"}},
			want: []wantChunk{{Text: "1, 2"}}, finish: "stop", usage: `"completion_tokens": 2`},
		{name: "non-streamed error body", sc: script{ctype: "application/json", pieces: []string{`{"error":{"message":"model not loaded"}}`}},
			class: trace.ErrServer, msg: "model not loaded"},
		{name: "pretty-printed but broken", sc: script{pieces: []string{"{\n  \"choices\": [\n"}}, class: trace.ErrMalformed},
		{name: "NDJSON where SSE was asked", sc: script{ctype: "application/x-ndjson", pieces: []string{tok("a") + "\n", tok("b") + "\n" + finishChunk + "\n"}},
			want: []wantChunk{{Text: "a"}, {Text: "b"}, {}}, finish: "length"},
		{name: "an HTML page", sc: script{ctype: "text/html", pieces: []string{"<html>\n<body>Bad gateway</body>\n</html>\n"}},
			class: trace.ErrMalformed, msg: "not an event stream"},
		{name: "keeps reading nothing after [DONE]", sc: script{pieces: []string{sse(tok("a"), finishChunk) + done + "data: garbage\n\n"}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
	}
	runCases(t, openAIChat, chatReq, cases)
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func TestOpenAICompletionsRead(t *testing.T) {
	cases := []readCase{
		{name: "text", sc: script{pieces: []string{sse(ctok("1"), ctok(", 2")), sse(`{"choices":[{"index":0,"text":"","finish_reason":"length"}]}`, usageChunk), done}},
			want: []wantChunk{{Text: "1"}, {Text: ", 2"}, {}, {}}, finish: "length", usage: `"completion_tokens":3`},
		{name: "split byte by byte", sc: script{byteByByte: true, pieces: []string{sse(ctok("é\"x\"")), sse(`{"choices":[{"text":"","finish_reason":"stop"}]}`)}},
			want: []wantChunk{{Text: "é\"x\""}, {}}, finish: "stop"},
		{name: "no finish", sc: script{pieces: []string{sse(ctok("1")), done}}, want: []wantChunk{{Text: "1"}}, class: trace.ErrIncomplete},
		{name: "non-streamed", sc: script{pieces: []string{`{"object":"text_completion","choices":[{"text":"1, 2","finish_reason":"stop"}]}`}},
			want: []wantChunk{{Text: "1, 2"}}, finish: "stop"},
	}
	runCases(t, openAICompletions, promptReq, cases)
}

func llama(content string, stop bool, extra string) string {
	b, _ := json.Marshal(content)
	s := `{"index":0,"content":` + string(b) + `,"tokens":[17],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":7}`
	if stop {
		s = `{"index":0,"content":` + string(b) + `,"tokens":[],"id_slot":0,"stop":true,"model":"m","tokens_predicted":16,"tokens_evaluated":7,` +
			`"generation_settings":{"n_predict":16,"temperature":0.5,"samplers":["top_k","temp"]},"prompt":"Count: 1, 2,","has_new_line":false,` +
			`"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":22,"timings":{"prompt_n":7,"prompt_ms":5.1,"predicted_n":16,"predicted_ms":120.4}` + extra + `}`
	}
	return s
}

func TestLlamaCppRead(t *testing.T) {
	cases := []readCase{
		{name: "native stream", sc: script{pieces: []string{sse(llama("1", false, "")), sse(llama(",", false, "")), sse(llama("", true, ""))}},
			want: []wantChunk{{Text: "1", Tokens: 1}, {Text: ",", Tokens: 1}, {}}, finish: "length",
			timing: `"predicted_ms":120.4`, usage: `{"tokens_predicted":16,"tokens_evaluated":7,"tokens_cached":22,"truncated":false}`},
		{name: "a token with no text yet", sc: script{pieces: []string{sse(`{"content":"","tokens":[200],"stop":false}`, `{"content":"é","tokens":[201],"stop":false}`, llama("", true, ""))}},
			want: []wantChunk{{Tokens: 1}, {Text: "é", Tokens: 1}, {}}, finish: "length", timing: "prompt_n"},
		{name: "eos", sc: script{pieces: []string{sse(`{"content":"a","stop":false}`, `{"content":"","stop":true,"stop_type":"eos","timings":{}}`)}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "stop", timing: "{}"},
		{name: "old llama.cpp: stopped_* flags", sc: script{pieces: []string{sse(`{"content":"a","stop":false}`, `{"content":"","stop":true,"stopped_eos":false,"stopped_limit":true,"stopped_word":false}`)}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
		{name: "byte by byte, CRLF", sc: script{byteByByte: true, pieces: []string{strings.ReplaceAll(sse(`{"content":"a","stop":false}`, `{"content":"","stop":true,"stop_type":"word"}`), "\n", "\r\n")}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "stop"},
		{name: "no stop", sc: script{pieces: []string{sse(llama("1", false, ""))}}, want: []wantChunk{{Text: "1", Tokens: 1}},
			class: trace.ErrIncomplete, msg: `without a "stop": true`, usage: "tokens_predicted"},
		{name: "error event", sc: script{pieces: []string{sse(llama("1", false, ""), `{"error":{"code":500,"message":"context shift disabled","type":"server_error"}}`)}},
			want: []wantChunk{{Text: "1", Tokens: 1}}, class: trace.ErrServer, msg: "context shift disabled", usage: "tokens_predicted"},
		{name: "error: line (outside SSE)", sc: script{pieces: []string{sse(llama("1", false, "")), `error: {"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}` + "\n\n"}},
			want: []wantChunk{{Text: "1", Tokens: 1}}, class: trace.ErrServer, msg: "exceeds the available context size", usage: "tokens_predicted"},
		{name: "stop of the wrong type", sc: script{pieces: []string{sse(`{"content":"a","stop":"yes"}`)}}, class: trace.ErrMalformed, msg: "stop is not a boolean"},
		{name: "non-streamed", sc: script{ctype: "application/json", pieces: []string{`{"content":"1, 2, 3","stop":true,"stop_type":"limit","timings":{"predicted_n":3}}`}},
			want: []wantChunk{{Text: "1, 2, 3"}}, finish: "length", timing: "predicted_n"},
	}
	runCases(t, llamaCpp, promptReq, cases)
}

func ollamaGenLine(s string) string {
	b, _ := json.Marshal(s)
	return `{"model":"m","created_at":"2026-12-02T13:00:00.1Z","response":` + string(b) + `,"done":false}` + "\n"
}

func ollamaChatLine(s string) string {
	b, _ := json.Marshal(s)
	return `{"model":"m","created_at":"2026-12-02T13:00:00.1Z","message":{"role":"assistant","content":` + string(b) + `},"done":false}` + "\n"
}

const ollamaDone = `"done":true,"done_reason":"length","total_duration":912345678,"load_duration":1234567,"prompt_eval_count":7,"prompt_eval_duration":2345678,"eval_count":16,"eval_duration":812345678}` + "\n"

func TestOllamaGenerateRead(t *testing.T) {
	cases := []readCase{
		{name: "NDJSON", sc: script{ctype: "application/x-ndjson", pieces: []string{ollamaGenLine("1"), ollamaGenLine(","), `{"model":"m","response":"","context":[1,2,3],` + ollamaDone}},
			want: []wantChunk{{Text: "1"}, {Text: ","}, {}}, finish: "length",
			timing: `{"total_duration":912345678,"load_duration":1234567,"prompt_eval_count":7,"prompt_eval_duration":2345678,"eval_count":16,"eval_duration":812345678}`},
		{name: "thinking", sc: script{pieces: []string{`{"response":"","thinking":"hmm","done":false}` + "\n", ollamaGenLine("a"), `{"response":"",` + ollamaDone}},
			want: []wantChunk{{Reasoning: "hmm"}, {Text: "a"}, {}}, finish: "length", timing: "eval_count"},
		{name: "split byte by byte with CRLF", sc: script{byteByByte: true, pieces: []string{strings.ReplaceAll(ollamaGenLine("a")+`{"response":"",`+ollamaDone, "\n", "\r\n")}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "length"},
		{name: "SSE where NDJSON was asked", sc: script{pieces: []string{"data: " + ollamaGenLine("a") + "\n", "data: {\"done\":true,\"done_reason\":\"stop\"}\n\n"}},
			want: []wantChunk{{Text: "a"}, {}}, finish: "stop"},
		{name: "last line without newline", sc: script{pieces: []string{ollamaGenLine("a"), `{"done":true}`}}, want: []wantChunk{{Text: "a"}, {}}, finish: "done"},
		{name: "no done", sc: script{pieces: []string{ollamaGenLine("a")}}, want: []wantChunk{{Text: "a"}}, class: trace.ErrIncomplete, msg: `without a "done": true`},
		{name: "error line", sc: script{pieces: []string{ollamaGenLine("a"), `{"error":"an error was encountered while running the model"}` + "\n"}},
			want: []wantChunk{{Text: "a"}}, class: trace.ErrServer, msg: "while running the model"},
		{name: "not JSON", sc: script{pieces: []string{ollamaGenLine("a"), "{oops}\n"}}, want: []wantChunk{{Text: "a"}}, class: trace.ErrMalformed},
		{name: "done of the wrong type", sc: script{pieces: []string{`{"response":"a","done":"no"}` + "\n"}}, class: trace.ErrMalformed, msg: "done is not a boolean"},
	}
	runCases(t, ollamaGenerate, promptReq, cases)
}

func TestOllamaChatRead(t *testing.T) {
	cases := []readCase{
		{name: "NDJSON", sc: script{ctype: "application/x-ndjson", pieces: []string{ollamaChatLine("1"), ollamaChatLine(" 2"), `{"model":"m","message":{"role":"assistant","content":""},` + ollamaDone}},
			want: []wantChunk{{Text: "1"}, {Text: " 2"}, {}}, finish: "length", timing: `"eval_duration":812345678`},
		{name: "thinking", sc: script{pieces: []string{`{"message":{"role":"assistant","content":"","thinking":"let me see"},"done":false}` + "\n", ollamaChatLine("x"), `{"message":{"content":""},` + ollamaDone}},
			want: []wantChunk{{Reasoning: "let me see"}, {Text: "x"}, {}}, finish: "length"},
		{name: "message of the wrong type", sc: script{pieces: []string{`{"message":"hi","done":false}` + "\n"}}, class: trace.ErrMalformed, msg: "message is not an object"},
		{name: "non-streamed", sc: script{ctype: "application/json", pieces: []string{`{"message":{"role":"assistant","content":"1, 2"},` + ollamaDone}},
			want: []wantChunk{{Text: "1, 2"}}, finish: "length", timing: "eval_count"},
	}
	runCases(t, ollamaChat, chatReq, cases)
}

// TestArrivalTime checks an event's time is that of its last byte: the
// server pauses before the final bytes of the only token event.
func TestArrivalTime(t *testing.T) {
	ev := sse(tok("late"))
	sc := script{pieces: []string{ev[:len(ev)-3], ev[len(ev)-3:] + sse(finishChunk)}, pause: 30 * time.Millisecond}
	rec, err, s := roundTrip(t, openAIChat, sc, chatReq, Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Chunks[0].T < s.lastWrite {
		t.Errorf("chunk time %d is before its last byte was written at %d", rec.Chunks[0].T, s.lastWrite)
	}
}

// TestBytes checks chunk bytes add up to the body: events that carry
// nothing are charged to the next chunk, and only [DONE] is left over. The
// role-only delta is a chunk of its own, with the comment before it.
func TestBytes(t *testing.T) {
	body := ": hi\n\n" + sse(roleChunk, tok("a"), emptyChunk, tok("b"), finishChunk, usageChunk) + done
	rec, err, _ := roundTrip(t, openAIChat, script{pieces: []string{body}}, chatReq, Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, c := range rec.Chunks {
		sum += c.Bytes
	}
	if want := len(body) - len(done); sum != want {
		t.Errorf("chunk bytes add up to %d, want %d", sum, want)
	}
	if role, first := rec.Chunks[0], rec.Chunks[1]; role.Bytes != len(": hi\n\n")+len(sse(roleChunk)) || role.Text != "" ||
		first.Bytes != len(sse(tok("a"))) || first.Text != "a" {
		t.Errorf("role chunk %+v, first text chunk %+v", role, first)
	}
}

// TestHugeLine sends a 10 MB line: a malformed-stream error, without the
// client buffering the line.
func TestHugeLine(t *testing.T) {
	for _, ep := range []Endpoint{openAIChat, llamaCpp, ollamaGenerate} {
		t.Run(ep.Name(), func(t *testing.T) {
			line := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 10<<20) + "\"}}]}\n\n"
			if strings.HasPrefix(ep.Name(), "ollama") {
				line = line[len("data: "):]
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rec, err, _ := roundTrip(t, ep, script{pieces: splitEvery(line, 1<<20)}, promptReq, Options{Model: "m"})
			runtime.ReadMemStats(&after)
			var te *trace.Error
			if !errors.As(err, &te) || te.Class != trace.ErrMalformed {
				t.Fatalf("Read: %v, want malformed", err)
			}
			if len(rec.Chunks) != 0 {
				t.Errorf("%d chunks", len(rec.Chunks))
			}
			// The line is 10 MiB; the parser may hold MaxEventSize of it. The
			// test's own server and client buffers add a little.
			if got := after.TotalAlloc - before.TotalAlloc; got > 4*MaxEventSize {
				t.Errorf("allocated %d MiB reading a 10 MiB line", got>>20)
			}
		})
	}
}

func TestNewRequest(t *testing.T) {
	tests := []struct {
		ep     Endpoint
		r      workload.Request
		o      Options
		path   string
		accept string
		want   map[string]any // fields that must be there, as JSON decodes them
		absent []string
	}{
		{openAIChat, chatReq, Options{Model: "m", APIKey: "sk-test"}, "/v1/chat/completions", "text/event-stream",
			map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 16.0,
				"temperature": 0.0, "ignore_eos": true, "messages": []any{map[string]any{"role": "user", "content": "Count: 1, 2,"}}},
			[]string{"prompt", "max_completion_tokens"}},
		{openAIChat, promptReq, Options{Model: "m", ContinuousUsage: true}, "/v1/chat/completions", "text/event-stream",
			map[string]any{"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}, "temperature": 0.5,
				"messages": []any{map[string]any{"role": "user", "content": "Count: 1, 2,"}}},
			[]string{"ignore_eos"}},
		{openAICompletions, promptReq, Options{Model: "m"}, "/v1/completions", "text/event-stream",
			map[string]any{"prompt": "Count: 1, 2,", "stream": true, "max_tokens": 16.0}, []string{"messages", "ignore_eos"}},
		{openAICompletions, promptReq, Options{Model: "m", TokenIDs: []int{1, 2, 3}}, "/v1/completions", "text/event-stream",
			map[string]any{"prompt": []any{1.0, 2.0, 3.0}}, nil},
		{llamaCpp, promptReq, Options{PromptCache: "off"}, "/completion", "text/event-stream",
			map[string]any{"prompt": "Count: 1, 2,", "n_predict": 16.0, "cache_prompt": false, "stream": true, "temperature": 0.5},
			[]string{"ignore_eos", "model", "return_tokens"}},
		// The server's default: no cache_prompt at all.
		{llamaCpp, promptReq, Options{}, "/completion", "text/event-stream",
			map[string]any{"prompt": "Count: 1, 2,", "stream": true}, []string{"cache_prompt"}},
		{llamaCpp, promptReq, Options{PromptCache: "on"}, "/completion", "text/event-stream",
			map[string]any{"cache_prompt": true}, nil},
		{llamaCpp, chatReq, Options{TokenIDs: []int{5}, ContinuousUsage: true}, "/completion", "text/event-stream",
			map[string]any{"prompt": []any{5.0}, "ignore_eos": true, "return_tokens": true}, nil},
		{ollamaGenerate, promptReq, Options{Model: "llama3"}, "/api/generate", "application/x-ndjson",
			map[string]any{"model": "llama3", "prompt": "Count: 1, 2,", "raw": true, "stream": true,
				"options": map[string]any{"num_predict": 16.0, "temperature": 0.5}}, []string{"ignore_eos"}},
		{ollamaChat, chatReq, Options{Model: "llama3"}, "/api/chat", "application/x-ndjson",
			map[string]any{"stream": true, "options": map[string]any{"num_predict": 16.0, "temperature": 0.0},
				"messages": []any{map[string]any{"role": "user", "content": "Count: 1, 2,"}}}, []string{"ignore_eos", "raw"}},
	}
	for _, tt := range tests {
		t.Run(tt.ep.Name(), func(t *testing.T) {
			finish := `{"choices":[{"delta":{},"finish_reason":"stop"}]}`
			switch tt.ep {
			case llamaCpp:
				finish = `{"content":"","stop":true}`
			case ollamaGenerate, ollamaChat:
				finish = `{"done":true}`
			}
			_, err, s := roundTrip(t, tt.ep, script{pieces: []string{sse(finish)}}, tt.r, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if s.path != tt.path || s.accept != tt.accept {
				t.Errorf("path %q accept %q, want %q %q", s.path, s.accept, tt.path, tt.accept)
			}
			if want := "Bearer " + tt.o.APIKey; (tt.o.APIKey != "" && s.auth != want) || (tt.o.APIKey == "" && s.auth != "") {
				t.Errorf("Authorization %q", s.auth)
			}
			for k, v := range tt.want {
				if diff := cmp.Diff(v, s.body[k]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
			for _, k := range tt.absent {
				if _, ok := s.body[k]; ok {
					t.Errorf("%s sent: %v", k, s.body[k])
				}
			}
		})
	}
}

func TestNewRequestErrors(t *testing.T) {
	tests := []struct {
		ep   Endpoint
		r    workload.Request
		o    Options
		want string
	}{
		{openAIChat, chatReq, Options{}, "Config.Model is needed"},
		{openAICompletions, chatReq, Options{Model: "m"}, "is a chat"},
		{llamaCpp, chatReq, Options{}, "is a chat"},
		{ollamaGenerate, chatReq, Options{Model: "m"}, "is a chat"},
		{ollamaGenerate, workload.Request{ID: "x"}, Options{Model: "m"}, "has none"},
		{ollamaChat, chatReq, Options{}, "Config.Model is needed"},
		{openAIChat, chatReq, Options{Model: "m", APIKey: "sk-secret"}, "Config.URL makes no request"},
		{anthropic, promptReq, Options{Model: "m"}, "no raw-prompt mode"},
		{anthropic, chatReq, Options{Model: "m", TokenIDs: []int{1}}, "no raw-prompt mode"},
		{anthropic, workload.Request{ID: "x", Messages: chatReq.Messages}, Options{Model: "m"}, "requires max_tokens"},
		{anthropic, workload.Request{ID: "x", MaxTokens: 4, Messages: []workload.Message{{Role: "system", Content: "s"}}}, Options{Model: "m"}, "only system messages"},
		{anthropic, chatReq, Options{}, "Config.Model is needed"},
		{openAIResponses, promptReq, Options{Model: "m"}, "no raw-prompt mode"},
		{openAIResponses, chatReq, Options{Model: "m", TokenIDs: []int{1}}, "no raw-prompt mode"},
		{openAIResponses, chatReq, Options{}, "Config.Model is needed"},
		{tgi, chatReq, Options{}, "completion shape, or use openai-chat"},
		{tgi, promptReq, Options{TokenIDs: []int{1}}, "tgi takes text, not token ids"},
		{sglang, chatReq, Options{}, "completion shape, or use openai-chat"},
		{trtllm, chatReq, Options{Model: "e"}, "completion shape"},
		{trtllm, promptReq, Options{Model: "e", TokenIDs: []int{1}}, "takes text_input, not token ids"},
		{trtllm, promptReq, Options{}, "Config.Model is needed"},
	}
	for _, tt := range tests {
		base := "http://127.0.0.1:1"
		if tt.want == "Config.URL makes no request" {
			base = "http://[::1"
		}
		_, err := tt.ep.NewRequest(context.Background(), base, &tt.r, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", tt.ep.Name(), err, tt.want)
		}
		if err != nil && tt.o.APIKey != "" && strings.Contains(err.Error(), tt.o.APIKey) {
			t.Errorf("%s: the error shows the API key", tt.ep.Name())
		}
	}
}

func TestJoinURL(t *testing.T) {
	tests := []struct{ base, want string }{
		{"http://h:8000", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1", "http://h:8000/v1/chat/completions"},
		{"http://h/proxy/v1/", "http://h/proxy/v1/chat/completions"},
	}
	for _, tt := range tests {
		if got := joinURL(tt.base, "/v1", "/chat/completions"); got != tt.want {
			t.Errorf("joinURL(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, n := range Names {
		ep, err := Lookup(n)
		if err != nil || ep.Name() != n {
			t.Errorf("Lookup(%q) = %v, %v", n, ep, err)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"opanai-chat", "did you mean openai-chat?"},
		{"vlm", "did you mean vllm (openai-chat)?"},
		{"antropic", "did you mean anthropic?"},
		{"ollama_generat", "did you mean ollama-generate?"},
		{"tgis", "did you mean tgi?"},
		{"xyzzy-frobnicate", "unknown API \"xyzzy-frobnicate\": use one of"},
	} {
		_, err := Lookup(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), strings.Join(Names, ", ")) {
			t.Errorf("Lookup(%q): %v, want %q and the list of names", tt.name, err, tt.want)
		}
	}
}

// TestAliases: every alias names an API, no alias is an API's name, and
// the spellings people type (any case, _ for -) resolve.
func TestAliases(t *testing.T) {
	for alias, name := range Aliases {
		if slices.Contains(Names, alias) || !slices.Contains(Names, name) {
			t.Errorf("alias %q → %q: an alias must not be a name, and must name one", alias, name)
		}
		if ep, err := Lookup(alias); err != nil || ep.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v; want %s", alias, ep, err, name)
		}
	}
	for in, want := range map[string]string{"vllm": "openai-chat", "VLLM": "openai-chat", "OpenAI_Chat": "openai-chat",
		"llama.cpp": "llamacpp", "ollama": "ollama-chat", " sglang ": "sglang", "tensorrt-llm": "trtllm"} {
		if got, ok := Canonical(in); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// TestNetworkError checks a read error other than the end of the body is
// returned as it is, for the engine to classify.
func TestNetworkError(t *testing.T) {
	boom := errors.New("read: connection reset by peer")
	body := io.MultiReader(strings.NewReader(sse(tok("a"))), &failReader{boom})
	rec := &trace.Record{}
	err := openAIChat.Read(body, func() int64 { return 1 }, rec)
	if !errors.Is(err, boom) || len(rec.Chunks) != 1 {
		t.Fatalf("Read: %v with %d chunks, want the read error and 1 chunk", err, len(rec.Chunks))
	}
	var te *trace.Error
	if errors.As(err, &te) {
		t.Errorf("a network error came back classified: %v", te)
	}
}

type failReader struct{ err error }

func (f *failReader) Read([]byte) (int, error) { return 0, f.err }
