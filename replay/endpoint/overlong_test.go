package endpoint

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// forever is a body that repeats one event without end.
type forever struct {
	event string
	off   int
	n     int64
}

func (f *forever) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], f.event[f.off:])
		n += c
		f.off = (f.off + c) % len(f.event)
	}
	f.n += int64(n)
	return n, nil
}

// TestOverlong: a server that streams valid one-token chunks forever past
// max_tokens, or sends only SSE comments forever, is stopped after a bounded
// multiple of max_tokens, with its own error class, and the record holds a
// bounded number of chunks.
func TestOverlong(t *testing.T) {
	chunk := `data: {"choices":[{"index":0,"delta":{"content":" 1"},"finish_reason":null}]}` + "\n\n"
	for _, c := range []struct {
		name, event string
		maxTokens   int
		want        string
	}{
		{"chunks past max_tokens", chunk, 16, "the response went past 128 chunks for max_tokens 16"},
		{"comments forever", ": keep-alive\n\n", 16, "the response went past 17039360 bytes for max_tokens 16"},
		{"no max_tokens", chunk, 0, "the response went past 131136 chunks for no max_tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := &forever{event: c.event}
			rec := &trace.Record{MaxTokens: c.maxTokens}
			err := openAIChat.Read(body, func() int64 { return 1 }, rec)
			var te *trace.Error
			if !errors.As(err, &te) || te.Class != trace.ErrOverlong || !strings.Contains(te.Message, c.want) {
				t.Fatalf("err = %v, want overlong with %q", err, c.want)
			}
			chunks, _, wire := responseBounds(c.maxTokens)
			if len(rec.Chunks) > chunks+1 || body.n > int64(wire)+64<<10 {
				t.Errorf("kept %d chunks (bound %d), read %d bytes (bound %d)", len(rec.Chunks), chunks, body.n, wire)
			}
		})
	}
}

// TestFinishKeptFirst: a server that sends finish reasons "length", then
// "stop", then "content_filter", with text after the first: the first is
// kept, the rest and the late text are noted.
func TestFinishKeptFirst(t *testing.T) {
	ev := func(text, finish string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":` + finish + `}]}` + "\n\n"
	}
	body := ev(" 1", "null") + ev(",", `"length"`) + ev(" 2", `"stop"`) + ev(" 3", `"content_filter"`) + ev("", `"stop"`) + "data: [DONE]\n\n"
	rec := &trace.Record{MaxTokens: 16}
	if err := (openAIChat).Read(io.Reader(strings.NewReader(body)), func() int64 { return 1 }, rec); err != nil {
		t.Fatal(err)
	}
	if rec.FinishReason != "length" {
		t.Errorf("finish reason %q, want the first, length", rec.FinishReason)
	}
	if want := "finish reasons after the first: stop, content_filter; 4 bytes of text after the finish signal"; rec.Notes != want {
		t.Errorf("notes %q\nwant  %q", rec.Notes, want)
	}
}
