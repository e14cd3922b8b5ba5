package endpoint

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// api is the Endpoint of a name TestLookup holds to be known.
func api(name string) Endpoint {
	ep, _ := Lookup(name)
	return ep
}

// TestFixtures reads the byte-exact streams of testdata/API (each follows
// the API's documentation, named in the README there), and a few cut or
// odd bodies, in one read and in 7-byte reads: the chunks, finish, usage,
// and the error class and message; for a stream that succeeds, chunk bytes
// add up to the body up to [DONE].
func TestFixtures(t *testing.T) {
	anthropicBasic, _ := os.ReadFile(filepath.Join("testdata", "anthropic", "basic.sse"))
	tests := []struct {
		api, file string
		body      string // instead of a file
		chunks    []wantChunk
		finish    string
		usage     string
		class     trace.ErrorClass
		msg       string
	}{
		{api: "anthropic", file: "basic.sse", chunks: []wantChunk{{Text: "Hello"}, {Text: "!"}, {}},
			finish: "stop", usage: `{"input_tokens":25,"output_tokens":15}`},
		{api: "anthropic", file: "thinking.sse",
			chunks: []wantChunk{{Reasoning: "Let me solve this step by step:\n\n1. First break down 27 * 453"}, {Text: "27 * 453 = 12,231"}, {}},
			finish: "stop", usage: `{"input_tokens":41,"output_tokens":45}`},
		{api: "anthropic", file: "cache.sse", chunks: []wantChunk{{Text: "1, 2"}, {}}, finish: "length",
			usage: `{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":90,"output_tokens":3}`},
		{api: "anthropic", file: "overloaded.sse", chunks: []wantChunk{{Text: "Hello"}}, usage: `{"input_tokens":25,"output_tokens":1}`,
			class: trace.ErrServer, msg: "Overloaded"},
		{api: "anthropic", file: "openai-switch.sse", usage: `{"input_tokens":25,"output_tokens":1}`,
			class: trace.ErrMalformed, msg: "without a type is not Anthropic's"},
		// message_delta alone (the connection cut before message_stop) is
		// not a finished response.
		{api: "anthropic", body: string(anthropicBasic[:bytes.Index(anthropicBasic, []byte("event: message_stop"))]),
			chunks: []wantChunk{{Text: "Hello"}, {Text: "!"}}, usage: `{"input_tokens":25,"output_tokens":15}`,
			class: trace.ErrIncomplete, msg: "message_stop"},
		{api: "openai-responses", file: "basic.sse", chunks: []wantChunk{{Text: "Hi"}, {Text: " there — \"hello\""}, {}}, finish: "stop",
			usage: `{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":48}`},
		{api: "openai-responses", file: "reasoning.sse", chunks: []wantChunk{{Reasoning: "Thinking"}, {Reasoning: " more"}, {Text: "1, 2"}, {}}, finish: "length",
			usage: `{"input_tokens":20,"input_tokens_details":{"cached_tokens":16},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":6},"total_tokens":28}`},
		{api: "openai-responses", file: "failed.sse", chunks: []wantChunk{{Text: "Hi"}}, class: trace.ErrServer, msg: "The model failed to generate a response."},
		{api: "openai-responses", file: "error.sse", class: trace.ErrServer, msg: "Something went wrong"},
		{api: "openai-responses", file: "switch.sse", class: trace.ErrMalformed, msg: "without a type is not the Responses API's"},
		// The special end token counts as a token but is not text.
		{api: "tgi", file: "basic.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}, {Text: " learning", Tokens: 1}, {Tokens: 1}}, finish: "stop",
			usage: `{"generated_tokens":3,"input_length":5}`},
		{api: "tgi", file: "oom.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}}, class: trace.ErrServer, msg: "CUDA out of memory"},
		{api: "tgi", file: "switch.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}}, class: trace.ErrMalformed, msg: "not TGI's"},
		// The delta of the cumulative text; tokens from the growth of
		// completion_tokens (1, 1, then 4 - 2 = 2).
		{api: "sglang", file: "basic.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}, {Text: " is", Tokens: 1}, {Text: " the capital", Tokens: 2}}, finish: "length",
			usage: `{"prompt_tokens":7,"completion_tokens":4,"cached_tokens":3}`},
		{api: "sglang", file: "rewrite.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}}, usage: `{"prompt_tokens":7,"completion_tokens":1,"cached_tokens":3}`,
			class: trace.ErrMalformed, msg: "does not extend the previous"},
		{api: "sglang", file: "abort.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}}, usage: `{"prompt_tokens":7,"completion_tokens":1,"cached_tokens":3}`,
			class: trace.ErrServer, msg: "aborted by the scheduler"},
		// A clean end after events is Triton's finish; a body without any
		// is not.
		{api: "trtllm", file: "basic.sse", chunks: []wantChunk{{Text: " Paris"}, {Text: " is"}, {Text: " the"}}, finish: "stop"},
		{api: "trtllm", file: "error.sse", chunks: []wantChunk{{Text: " Paris"}}, class: trace.ErrServer, msg: "out of memory"},
		{api: "trtllm", file: "switch.sse", chunks: []wantChunk{{Text: " Paris"}}, class: trace.ErrMalformed, msg: "not Triton's"},
		{api: "trtllm", body: "", class: trace.ErrIncomplete, msg: "before its first event"},
	}
	for _, tt := range tests {
		body := []byte(tt.body)
		if tt.file != "" {
			var err error
			if body, err = os.ReadFile(filepath.Join("testdata", tt.api, tt.file)); err != nil {
				t.Fatal(err)
			}
		}
		ep := api(tt.api)
		for _, split := range []byte{0, 7} {
			t.Run(tt.api+"/"+tt.file, func(t *testing.T) {
				var sizes []byte
				if split > 0 {
					sizes = []byte{split - 1}
				}
				r := &splitReader{b: body, sizes: sizes}
				rec := &trace.Record{}
				err := ep.Read(r, r.now, rec)
				checkInvariants(t, rec, err)
				if diff := cmp.Diff(tt.chunks, chunksOf(rec)); diff != "" {
					t.Errorf("chunks (-want +got):\n%s", diff)
				}
				if rec.FinishReason != tt.finish || rec.Usage != tt.usage {
					t.Errorf("finish %q usage %s, want %q %s", rec.FinishReason, rec.Usage, tt.finish, tt.usage)
				}
				var te *trace.Error
				switch {
				case tt.class == "":
					if err != nil {
						t.Fatalf("error %v", err)
					}
					sum, want := 0, len(body)
					for _, c := range rec.Chunks {
						sum += c.Bytes
					}
					if i := bytes.Index(body, []byte("data: [DONE]")); i >= 0 {
						want = i
					}
					if sum != want {
						t.Errorf("chunk bytes add up to %d, the body to [DONE] is %d", sum, want)
					}
				case !errors.As(err, &te) || te.Class != tt.class || !strings.Contains(te.Message, tt.msg):
					t.Errorf("error %v, want %s containing %q", err, tt.class, tt.msg)
				}
			})
		}
	}
}

// TestNotStreamed: a server that ignores stream:true and answers with one
// whole object is read as one chunk with its text, reasoning, usage and
// finish (the analysis flags that it did not stream). A Responses
// reasoning item's text is reasoning whether its type comes before its
// content (OpenAI's order) or after (Go's sorted map keys).
func TestNotStreamed(t *testing.T) {
	for _, tc := range []struct {
		api, body string
		want      wantChunk
		finish    string
		usage     string
	}{
		{"anthropic", `{"id":"msg_5","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi there"}],` +
			`"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":7,"output_tokens":2}}`,
			wantChunk{Text: "Hi there"}, "length", `{"input_tokens":7,"output_tokens":2}`},
		{"anthropic", `{"type":"message","content":[{"type":"thinking","thinking":"hm","signature":"x"},{"type":"text","text":"Hi"}],"stop_reason":"end_turn"}`,
			wantChunk{Text: "Hi", Reasoning: "hm"}, "stop", ""},
		{"openai-responses", `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"error":null,` +
			`"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"1, 2","annotations":[]}]}],` +
			`"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}`,
			wantChunk{Text: "1, 2"}, "length", `{"input_tokens":5,"output_tokens":3,"total_tokens":8}`},
		{"openai-responses", `{"object":"response","status":"completed","output":[{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"1, 2"}]},` +
			`{"id":"m_1","content":[{"type":"output_text","text":", 3"}],"role":"assistant","type":"message"}]}`,
			wantChunk{Text: ", 3", Reasoning: "1, 2"}, "stop", ""},
		{"openai-responses", `{"object":"response","status":"completed","output":[{"content":[{"text":"1, 2","type":"reasoning_text"}],"id":"rs_1","type":"reasoning"},` +
			`{"content":[{"text":", 3","type":"output_text"}],"role":"assistant","type":"message"}]}`,
			wantChunk{Text: ", 3", Reasoning: "1, 2"}, "stop", ""},
		{"openai-chat", `{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"3","reasoning_content":"1, 2"},"finish_reason":"length"}]}`,
			wantChunk{Text: "3", Reasoning: "1, 2"}, "length", ""},
	} {
		rec := &trace.Record{}
		err := api(tc.api).Read(strings.NewReader(tc.body), clock(), rec)
		checkInvariants(t, rec, err)
		if err != nil || cmp.Diff([]wantChunk{tc.want}, chunksOf(rec)) != "" || rec.FinishReason != tc.finish || rec.Usage != tc.usage {
			t.Errorf("%s %.60s: err %v, chunks %+v, finish %q, usage %s", tc.api, tc.body, err, chunksOf(rec), rec.FinishReason, rec.Usage)
		}
	}
}

// TestRequestBodies: each API's documented body, route and key header,
// byte for byte.
func TestRequestBodies(t *testing.T) {
	system := workload.Request{ID: "p000-0003", MaxTokens: 16, Temperature: 0.5, IgnoreEOS: true, Messages: []workload.Message{
		{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Count: 1, 2,"}}}
	greedy := promptReq
	greedy.Temperature = 0
	for _, tc := range []struct {
		api, base string
		r         workload.Request
		o         Options
		url, body string
		headers   map[string]string // "" for a header that must be absent
	}{
		// x-api-key and anthropic-version, never a bearer token; system
		// messages in the top-level system field; max_tokens always sent.
		{"anthropic", "http://h:1/v1", system, Options{Model: "claude", APIKey: "sk-ant-secret"}, "http://h:1/v1/messages",
			`{"model":"claude","system":"Be brief.","messages":[{"role":"user","content":"Count: 1, 2,"}],"max_tokens":16,"temperature":0.5,"stream":true}`,
			map[string]string{"x-api-key": "sk-ant-secret", "anthropic-version": AnthropicVersion, "Authorization": ""}},
		{"openai-responses", "http://h:1/v1", chatReq, Options{Model: "m", APIKey: "sk-x"}, "http://h:1/v1/responses",
			`{"model":"m","input":[{"role":"user","content":"Count: 1, 2,"}],"max_output_tokens":16,"temperature":0,"stream":true,"store":false}`,
			map[string]string{"Authorization": "Bearer sk-x"}},
		// TGI refuses temperature 0: greedy is do_sample false without one.
		{"tgi", "http://h:1", promptReq, Options{}, "http://h:1/generate_stream",
			`{"inputs":"Count: 1, 2,","parameters":{"max_new_tokens":16,"temperature":0.5,"do_sample":true,"details":true},"stream":true}`, nil},
		{"tgi", "http://h:1", greedy, Options{}, "http://h:1/generate_stream",
			`{"inputs":"Count: 1, 2,","parameters":{"max_new_tokens":16,"do_sample":false,"details":true},"stream":true}`, nil},
		{"sglang", "http://h:1", promptReq, Options{}, "http://h:1/generate",
			`{"text":"Count: 1, 2,","sampling_params":{"max_new_tokens":16,"temperature":0.5},"stream":true}`, nil},
		{"sglang", "http://h:1", chatReq, Options{TokenIDs: []int{4, 5}}, "http://h:1/generate",
			`{"input_ids":[4,5],"sampling_params":{"max_new_tokens":16,"temperature":0,"ignore_eos":true},"stream":true}`, nil},
		{"trtllm", "http://h:1", promptReq, Options{Model: "ensemble"}, "http://h:1/v2/models/ensemble/generate_stream",
			`{"text_input":"Count: 1, 2,","max_tokens":16,"temperature":0.5,"stream":true}`, nil},
	} {
		req, err := api(tc.api).NewRequest(context.Background(), tc.base, &tc.r, tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.api, err)
		}
		b, _ := req.GetBody()
		body, _ := io.ReadAll(b)
		if req.URL.String() != tc.url || string(body) != tc.body+"\n" {
			t.Errorf("%s: url %s body\n%s\nwant %s\n%s", tc.api, req.URL, body, tc.url, tc.body)
		}
		for k, v := range tc.headers {
			if got := req.Header.Get(k); got != v {
				t.Errorf("%s: header %s %q, want %q", tc.api, k, got, v)
			}
		}
	}
}
