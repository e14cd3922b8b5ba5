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

// TestTGIFixtures reads the byte-exact streams of testdata/tgi (each
// follows TGI's API documentation, see the README there) whole and in
// 7-byte reads. The special end token counts as a token but is not text.
func TestTGIFixtures(t *testing.T) {
	tests := []struct {
		file   string
		chunks []wantChunk
		finish string
		usage  string
		class  trace.ErrorClass
		msg    string
	}{
		{file: "basic.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}, {Text: " learning", Tokens: 1}, {Tokens: 1}}, finish: "stop",
			usage: `{"generated_tokens":3,"input_length":5}`},
		{file: "oom.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}}, class: trace.ErrServer, msg: "CUDA out of memory"},
		{file: "switch.sse", chunks: []wantChunk{{Text: " Deep", Tokens: 1}}, class: trace.ErrMalformed, msg: "not TGI's"},
	}
	for _, tt := range tests {
		body, err := os.ReadFile(filepath.Join("testdata", "tgi", tt.file))
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
				err := tgi.Read(r, r.now, rec)
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
				case !errors.As(err, &te) || te.Class != tt.class || !strings.Contains(te.Message, tt.msg):
					t.Errorf("error %v, want %s containing %q", err, tt.class, tt.msg)
				}
			})
		}
	}
}

// TestTGIRequest: inputs, max_new_tokens, details, greedy as do_sample
// false without a temperature (TGI refuses temperature 0); chats refused.
func TestTGIRequest(t *testing.T) {
	req, err := tgi.NewRequest(context.Background(), "http://h:1", &promptReq, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := req.GetBody()
	raw := make([]byte, 4096)
	n, _ := b.Read(raw)
	want := `{"inputs":"Count: 1, 2,","parameters":{"max_new_tokens":16,"temperature":0.5,"do_sample":true,"details":true},"stream":true}` + "\n"
	if req.URL.String() != "http://h:1/generate_stream" || string(raw[:n]) != want {
		t.Errorf("url %s body\n%s\nwant\n%s", req.URL, raw[:n], want)
	}
	greedy := promptReq
	greedy.Temperature = 0
	req, _ = tgi.NewRequest(context.Background(), "http://h:1", &greedy, Options{})
	b, _ = req.GetBody()
	n, _ = b.Read(raw)
	if strings.Contains(string(raw[:n]), "temperature") || !strings.Contains(string(raw[:n]), `"do_sample":false`) {
		t.Errorf("greedy body %s", raw[:n])
	}
	if _, err := (tgi).NewRequest(context.Background(), "http://h:1", &chatReq, Options{}); err == nil || !strings.Contains(err.Error(), "completion shape") {
		t.Errorf("chat: %v", err)
	}
}
