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
)

// TestSGLangFixtures reads the byte-exact streams of testdata/sglang
// (following SGLang's documentation, see the README there): the delta of
// the cumulative text, tokens from the growth of completion_tokens (1, 1,
// then 4 - 2 = 2), text that does not extend the previous classified.
func TestSGLangFixtures(t *testing.T) {
	tests := []struct {
		file   string
		chunks []wantChunk
		finish string
		usage  string
		class  trace.ErrorClass
		msg    string
	}{
		{file: "basic.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}, {Text: " is", Tokens: 1}, {Text: " the capital", Tokens: 2}}, finish: "length",
			usage: `{"prompt_tokens":7,"completion_tokens":4,"cached_tokens":3}`},
		{file: "rewrite.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}}, usage: `{"prompt_tokens":7,"completion_tokens":1,"cached_tokens":3}`,
			class: trace.ErrMalformed, msg: "does not extend the previous"},
		{file: "abort.sse", chunks: []wantChunk{{Text: " Paris", Tokens: 1}}, usage: `{"prompt_tokens":7,"completion_tokens":1,"cached_tokens":3}`,
			class: trace.ErrServer, msg: "aborted by the scheduler"},
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join("testdata", "sglang", tt.file))
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
				err := sglang.Read(r, r.now, rec)
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
				case !errors.As(err, &te) || te.Class != tt.class || !strings.Contains(te.Message, tt.msg):
					t.Errorf("error %v, want %s containing %q", err, tt.class, tt.msg)
				}
			})
		}
	}
}

func TestSGLangRequest(t *testing.T) {
	req, err := sglang.NewRequest(context.Background(), "http://h:1", &promptReq, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := req.GetBody()
	raw := make([]byte, 4096)
	n, _ := b.Read(raw)
	want := `{"text":"Count: 1, 2,","sampling_params":{"max_new_tokens":16,"temperature":0.5},"stream":true}` + "\n"
	if req.URL.String() != "http://h:1/generate" || string(raw[:n]) != want {
		t.Errorf("url %s body\n%s\nwant\n%s", req.URL, raw[:n], want)
	}
	req, _ = sglang.NewRequest(context.Background(), "http://h:1", &chatReq, Options{TokenIDs: []int{4, 5}})
	b, _ = req.GetBody()
	n, _ = b.Read(raw)
	if !strings.Contains(string(raw[:n]), `"input_ids":[4,5]`) || !strings.Contains(string(raw[:n]), `"ignore_eos":true`) {
		t.Errorf("ids body %s", raw[:n])
	}
	if _, err := (sglang).NewRequest(context.Background(), "http://h:1", &chatReq, Options{}); err == nil || !strings.Contains(err.Error(), "completion shape") {
		t.Errorf("chat: %v", err)
	}
}
