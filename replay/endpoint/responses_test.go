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

// TestResponsesFixtures reads the byte-exact streams of
// testdata/openai-responses (each follows OpenAI's streaming events
// reference, see the README there) in one read and in 7-byte reads.
func TestResponsesFixtures(t *testing.T) {
	tests := []struct {
		file   string
		chunks []wantChunk
		finish string
		usage  string
		class  trace.ErrorClass
		msg    string
	}{
		{file: "basic.sse", chunks: []wantChunk{{Text: "Hi"}, {Text: " there — \"hello\""}, {}}, finish: "stop",
			usage: `{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":48}`},
		{file: "reasoning.sse", chunks: []wantChunk{{Reasoning: "Thinking"}, {Text: "1, 2"}, {}}, finish: "length",
			usage: `{"input_tokens":20,"input_tokens_details":{"cached_tokens":16},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":6},"total_tokens":28}`},
		{file: "failed.sse", chunks: []wantChunk{{Text: "Hi"}}, class: trace.ErrServer, msg: "The model failed to generate a response."},
		{file: "error.sse", class: trace.ErrServer, msg: "Something went wrong"},
		{file: "switch.sse", class: trace.ErrMalformed, msg: "without a type is not the Responses API's"},
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join("testdata", "openai-responses", tt.file))
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
				err := openAIResponses.Read(r, r.now, rec)
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
					sum := 0
					for _, c := range rec.Chunks {
						sum += c.Bytes
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

// TestResponsesRequest: the documented body (input messages,
// max_output_tokens, stream, store false), a bearer token, and the
// refusals at start.
func TestResponsesRequest(t *testing.T) {
	req, err := openAIResponses.NewRequest(context.Background(), "http://h:1/v1", &chatReq, Options{Model: "m", APIKey: "sk-x"})
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://h:1/v1/responses" || req.Header.Get("Authorization") != "Bearer sk-x" {
		t.Errorf("url %s headers %v", req.URL, req.Header)
	}
	b, _ := req.GetBody()
	raw := make([]byte, 4096)
	n, _ := b.Read(raw)
	want := `{"model":"m","input":[{"role":"user","content":"Count: 1, 2,"}],"max_output_tokens":16,"temperature":0,"stream":true,"store":false}` + "\n"
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
		{chatReq, Options{}, "Model"},
	} {
		if _, err := (openAIResponses).NewRequest(context.Background(), "http://h:1", &bad.r, bad.o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want %q", bad.r, err, bad.want)
		}
	}
}

// TestResponsesNotStreamed: a whole Response object (a server that ignored
// stream:true) is one chunk with its text, usage and status.
func TestResponsesNotStreamed(t *testing.T) {
	body := `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"error":null,` +
		`"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"1, 2","annotations":[]}]}],` +
		`"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}`
	rec := &trace.Record{}
	err := openAIResponses.Read(strings.NewReader(body), clock(), rec)
	checkInvariants(t, rec, err)
	if err != nil || len(rec.Chunks) != 1 || rec.Chunks[0].Text != "1, 2" || rec.FinishReason != "length" ||
		rec.Usage != `{"input_tokens":5,"output_tokens":3,"total_tokens":8}` {
		t.Errorf("err %v record %+v", err, rec)
	}
}
