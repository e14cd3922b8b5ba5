package endpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TestAnthropicFixtures reads the byte-exact streams of
// testdata/anthropic (each follows Anthropic's streaming documentation, see
// the README there) in one read and in 7-byte reads.
func TestAnthropicFixtures(t *testing.T) {
	tests := []struct {
		file   string
		chunks []wantChunk
		finish string
		usage  string
		class  trace.ErrorClass
		msg    string
	}{
		{file: "basic.sse", chunks: []wantChunk{{Text: "Hello"}, {Text: "!"}, {}},
			finish: "stop", usage: `{"input_tokens":25,"output_tokens":15}`},
		{file: "thinking.sse",
			chunks: []wantChunk{{Reasoning: "Let me solve this step by step:\n\n1. First break down 27 * 453"}, {Text: "27 * 453 = 12,231"}, {}},
			finish: "stop", usage: `{"input_tokens":41,"output_tokens":45}`},
		{file: "cache.sse", chunks: []wantChunk{{Text: "1, 2"}, {}}, finish: "length",
			usage: `{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":90,"output_tokens":3}`},
		{file: "overloaded.sse", chunks: []wantChunk{{Text: "Hello"}}, usage: `{"input_tokens":25,"output_tokens":1}`,
			class: trace.ErrServer, msg: "Overloaded"},
		{file: "openai-switch.sse", usage: `{"input_tokens":25,"output_tokens":1}`,
			class: trace.ErrMalformed, msg: "without a type is not Anthropic's"},
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join("testdata", "anthropic", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range []int{0, 7} {
			t.Run(tt.file, func(t *testing.T) {
				var sizes []byte
				if split > 0 {
					sizes = []byte{byte(split - 1)}
				}
				r := &splitReader{b: body, sizes: sizes}
				rec := &trace.Record{}
				err := anthropic.Read(r, r.now, rec)
				checkInvariants(t, rec, err)
				if diff := cmp.Diff(tt.chunks, chunksOf(rec)); diff != "" {
					t.Errorf("chunks (-want +got):\n%s", diff)
				}
				if rec.FinishReason != tt.finish || rec.Usage != tt.usage {
					t.Errorf("finish %q usage %s, want %q %s", rec.FinishReason, rec.Usage, tt.finish, tt.usage)
				}
				sum := 0
				for _, c := range rec.Chunks {
					sum += c.Bytes
				}
				var te *trace.Error
				switch {
				case tt.class == "":
					if err != nil {
						t.Fatalf("error %v", err)
					}
					if sum != len(body) {
						t.Errorf("chunk bytes add up to %d, the body is %d", sum, len(body))
					}
				case !errors.As(err, &te) || te.Class != tt.class || !strings.Contains(te.Message, tt.msg):
					t.Errorf("error %v, want %s containing %q", err, tt.class, tt.msg)
				}
			})
		}
	}
}

// TestAnthropicNotStreamed: a server that ignores stream:true and answers
// with one Message object is read as one chunk with its usage and
// stop_reason (the analysis flags that it did not stream).
func TestAnthropicNotStreamed(t *testing.T) {
	body := `{"id":"msg_5","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi there"}],` +
		`"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":7,"output_tokens":2}}`
	rec := &trace.Record{}
	err := anthropic.Read(strings.NewReader(body), clock(), rec)
	checkInvariants(t, rec, err)
	if err != nil || len(rec.Chunks) != 1 || rec.Chunks[0].Text != "Hi there" || rec.FinishReason != "length" ||
		rec.Usage != `{"input_tokens":7,"output_tokens":2}` {
		t.Errorf("err %v record %+v", err, rec)
	}
}

// TestAnthropicEndsWithoutStop: message_delta alone (the connection cut
// before message_stop) is not a finished response.
func TestAnthropicEndsWithoutStop(t *testing.T) {
	body, _ := os.ReadFile(filepath.Join("testdata", "anthropic", "basic.sse"))
	cut := string(body[:strings.Index(string(body), "event: message_stop")])
	rec := &trace.Record{}
	err := anthropic.Read(strings.NewReader(cut), clock(), rec)
	var te *trace.Error
	if !errors.As(err, &te) || te.Class != trace.ErrIncomplete || !strings.Contains(te.Message, "message_stop") {
		t.Errorf("error %v, want incomplete naming message_stop", err)
	}
}

// TestAnthropicRequest: the body and headers the Messages API documents
// (x-api-key and anthropic-version, never a bearer token; system messages
// in the top-level system field; max_tokens always sent).
func TestAnthropicRequest(t *testing.T) {
	r := workload.Request{ID: "p000-0003", MaxTokens: 16, Temperature: 0.5, IgnoreEOS: true, Messages: []workload.Message{
		{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Count: 1, 2,"}}}
	req, err := anthropic.NewRequest(context.Background(), "http://h:1/v1", &r, Options{Model: "claude", APIKey: "sk-ant-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://h:1/v1/messages" || req.Header.Get("x-api-key") != "sk-ant-secret" ||
		req.Header.Get("anthropic-version") != AnthropicVersion || req.Header.Get("Authorization") != "" {
		t.Errorf("url %s headers %v", req.URL, req.Header)
	}
	b, _ := req.GetBody()
	raw := make([]byte, 4096)
	n, _ := b.Read(raw)
	want := `{"model":"claude","system":"Be brief.","messages":[{"role":"user","content":"Count: 1, 2,"}],"max_tokens":16,"temperature":0.5,"stream":true}` + "\n"
	if got := string(raw[:n]); got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []struct {
		r    workload.Request
		o    Options
		want string
	}{
		{promptReq, Options{Model: "m"}, "no raw-prompt mode"},
		{chatReq, Options{Model: "m", TokenIDs: []int{1}}, "no raw-prompt mode"},
		{workload.Request{ID: "x", Messages: chatReq.Messages}, Options{Model: "m"}, "requires max_tokens"},
		{chatReq, Options{}, "Model"},
	} {
		if _, err := (anthropic).NewRequest(context.Background(), "http://h:1", &bad.r, bad.o); err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line with %q", bad.r, err, bad.want)
		}
	}
}
