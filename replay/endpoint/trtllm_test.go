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

// TestTRTLLMFixtures reads the byte-exact streams of testdata/trtllm
// (following Triton's generate extension, see the README there). A clean
// end after events is the finish; a body cut before any event is not.
func TestTRTLLMFixtures(t *testing.T) {
	tests := []struct {
		file   string
		chunks []wantChunk
		finish string
		class  trace.ErrorClass
		msg    string
	}{
		{file: "basic.sse", chunks: []wantChunk{{Text: " Paris"}, {Text: " is"}, {Text: " the"}}, finish: "stop"},
		{file: "error.sse", chunks: []wantChunk{{Text: " Paris"}}, class: trace.ErrServer, msg: "out of memory"},
		{file: "switch.sse", chunks: []wantChunk{{Text: " Paris"}}, class: trace.ErrMalformed, msg: "not Triton's"},
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join("testdata", "trtllm", tt.file))
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
				err := trtllm.Read(r, r.now, rec)
				checkInvariants(t, rec, err)
				if diff := cmp.Diff(tt.chunks, chunksOf(rec)); diff != "" {
					t.Errorf("chunks (-want +got):\n%s", diff)
				}
				if rec.FinishReason != tt.finish {
					t.Errorf("finish %q, want %q", rec.FinishReason, tt.finish)
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
	rec := &trace.Record{}
	var te *trace.Error
	if err := (trtllm).Read(strings.NewReader(""), clock(), rec); !errors.As(err, &te) || te.Class != trace.ErrIncomplete {
		t.Errorf("empty body: %v, want incomplete", err)
	}
}

func TestTRTLLMRequest(t *testing.T) {
	req, err := trtllm.NewRequest(context.Background(), "http://h:1", &promptReq, Options{Model: "ensemble"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := req.GetBody()
	raw := make([]byte, 4096)
	n, _ := b.Read(raw)
	want := `{"text_input":"Count: 1, 2,","max_tokens":16,"temperature":0.5,"stream":true}` + "\n"
	if req.URL.String() != "http://h:1/v2/models/ensemble/generate_stream" || string(raw[:n]) != want {
		t.Errorf("url %s body\n%s\nwant\n%s", req.URL, raw[:n], want)
	}
	if _, err := (trtllm).NewRequest(context.Background(), "http://h:1", &chatReq, Options{Model: "e"}); err == nil || !strings.Contains(err.Error(), "completion shape") {
		t.Errorf("chat: %v", err)
	}
	if _, err := (trtllm).NewRequest(context.Background(), "http://h:1", &promptReq, Options{}); err == nil || !strings.Contains(err.Error(), "Model") {
		t.Errorf("no model: %v", err)
	}
}
