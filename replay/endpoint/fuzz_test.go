package endpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// splitReader returns the body in reads of the sizes split gives (cycled),
// so fuzzing covers events cut anywhere.
type splitReader struct {
	b     []byte
	sizes []byte
	k     int
	t     int64
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := len(r.b)
	if len(r.sizes) > 0 {
		n = 1 + int(r.sizes[r.k%len(r.sizes)])
		r.k++
	}
	n = copy(p, r.b[:min(n, len(r.b))])
	r.b = r.b[n:]
	r.t++
	return n, nil
}

func (r *splitReader) now() int64 { return r.t }

// fuzzRead checks what must hold for any body: no panic, no hang (the body
// is finite and Read must return), only classified errors (the reader never
// fails), chunks in time order with bytes within the body, and success only
// with a finish reason.
func fuzzRead(t *testing.T, ep Endpoint, body, split []byte) {
	r := &splitReader{b: body, sizes: split}
	rec := &trace.Record{}
	err := ep.Read(r, r.now, rec)
	var te *trace.Error
	if err != nil && !errors.As(err, &te) {
		t.Fatalf("unclassified error %v", err)
	}
	if te != nil && (te.Message == "" || len(te.Body) > bodyMax) {
		t.Fatalf("error %+v", te)
	}
	if err == nil && rec.FinishReason == "" {
		t.Fatalf("success without a finish reason")
	}
	sum := 0
	var prev int64
	for _, c := range rec.Chunks {
		if c.T < prev || c.Bytes <= 0 {
			t.Fatalf("chunk %+v after time %d", c, prev)
		}
		prev = c.T
		sum += c.Bytes
	}
	if sum > len(body) {
		t.Fatalf("chunk bytes add up to %d, body has %d", sum, len(body))
	}
}

func seedBodies(f *testing.F, bodies ...string) {
	for _, b := range bodies {
		f.Add([]byte(b), []byte(nil))
		f.Add([]byte(b), []byte{0, 3, 17})
	}
}

func FuzzOpenAIChatRead(f *testing.F) {
	seedBodies(f,
		sse(roleChunk, tok("1"), tok(", 2"), finishChunk, usageChunk)+done,
		"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
		"data:{\"choices\":[{\"delta\":{\"reasoning_content\":\"\\ud83d\\ude00\"}}]}\r\n\r\n",
		`{"object":"chat.completion","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`,
		"{\n \"choices\": [{\"message\": {\"content\": \"a\"}, \"finish_reason\": \"stop\"}]\n}\n",
		`data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1},"sim_sent_unix_ns":12}`,
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, openAIChat, body, split) })
}

func FuzzOpenAICompletionsRead(f *testing.F) {
	seedBodies(f,
		sse(ctok("1"), ctok(", 2"), `{"choices":[{"text":"","finish_reason":"length"}]}`, usageChunk)+done,
		`data: {"object":"error","message":"bad"}`+"\n\n",
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, openAICompletions, body, split) })
}

func FuzzLlamaCppRead(f *testing.F) {
	seedBodies(f,
		sse(llama("1", false, ""), llama(",", false, ""), llama("", true, "")),
		sse(`{"content":"a","stop":false}`, `{"content":"","stop":true,"stopped_limit":true}`),
		`{"content":"x","stop":true,"timings":{}}`,
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, llamaCpp, body, split) })
}

func FuzzOllamaGenerateRead(f *testing.F) {
	seedBodies(f,
		ollamaGenLine("1")+ollamaGenLine(",")+`{"response":"",`+ollamaDone,
		`{"response":"","thinking":"hm","done":false}`+"\n"+`{"error":"boom"}`,
		"data: "+ollamaGenLine("a")+"\n",
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, ollamaGenerate, body, split) })
}

func FuzzOllamaChatRead(f *testing.F) {
	seedBodies(f,
		ollamaChatLine("1")+ollamaChatLine(" 2")+`{"message":{"content":""},`+ollamaDone,
		`{"message":{"content":"","thinking":"x"},"done":true}`,
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, ollamaChat, body, split) })
}

// seedFiles adds every file of testdata/dir as a seed.
func seedFiles(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.sse"))
	if len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s", dir)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seedBodies(f, string(b))
	}
}

func FuzzAnthropicRead(f *testing.F) {
	seedFiles(f, "anthropic")
	seedBodies(f,
		`{"type":"message","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
		"data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\",\"sim_sent_unix_ns\":5}\n\n",
	)
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, anthropic, body, split) })
}

func FuzzOpenAIResponsesRead(f *testing.F) {
	seedFiles(f, "openai-responses")
	seedBodies(f, "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"output_tokens\":1}},\"sim_sent_unix_ns\":3}\n\n")
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, openAIResponses, body, split) })
}

func FuzzTGIRead(f *testing.F) {
	seedFiles(f, "tgi")
	seedBodies(f, `data:{"error":"Input validation error: inputs must have less than 4096 tokens","error_type":"validation"}`+"\n\n")
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, tgi, body, split) })
}

func FuzzSGLangRead(f *testing.F) {
	seedFiles(f, "sglang")
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, sglang, body, split) })
}

func FuzzTRTLLMRead(f *testing.F) {
	seedFiles(f, "trtllm")
	f.Fuzz(func(t *testing.T, body, split []byte) { fuzzRead(t, trtllm, body, split) })
}
