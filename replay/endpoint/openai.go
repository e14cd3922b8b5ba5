package endpoint

import (
	"context"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// OpenAIChat is the OpenAI chat completions API (/v1/chat/completions), as
// served by vLLM, SGLang, llama.cpp, TGI and OpenAI itself.
type OpenAIChat struct{}

// OpenAICompletions is the OpenAI legacy completions API (/v1/completions):
// a raw prompt, exact to the token, or the token ids themselves.
type OpenAICompletions struct{}

var (
	_ Endpoint = OpenAIChat{}
	_ Endpoint = OpenAICompletions{}
)

// Name implements Endpoint.
func (OpenAIChat) Name() string { return "openai-chat" }

// Name implements Endpoint.
func (OpenAICompletions) Name() string { return "openai-completions" }

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
	// ContinuousUsageStats is vLLM's per-chunk usage; servers that do not
	// know it ignore it, so it is sent only when asked for.
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"`
}

// openAIBody is the request body of both OpenAI APIs. max_tokens is sent,
// not max_completion_tokens: vLLM, SGLang, llama.cpp and TGI all accept it,
// while the newer name is not known everywhere.
type openAIBody struct {
	Model         string             `json:"model"`
	Messages      []workload.Message `json:"messages,omitempty"`
	Prompt        any                `json:"prompt,omitempty"`
	Stream        bool               `json:"stream"`
	StreamOptions streamOptions      `json:"stream_options"`
	MaxTokens     int                `json:"max_tokens,omitempty"`
	Temperature   float64            `json:"temperature"`
	// IgnoreEOS is a vLLM/SGLang/llama.cpp extension; OpenAI itself
	// rejects it, so it is sent only when the workload asks.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
}

func openAIRequest(r *workload.Request, o Options) openAIBody {
	return openAIBody{
		Model:         o.Model,
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true, ContinuousUsageStats: o.ContinuousUsage},
		MaxTokens:     r.MaxTokens,
		Temperature:   r.Temperature,
		IgnoreEOS:     r.IgnoreEOS,
	}
}

// NewRequest implements Endpoint. A completion-shaped request (a prompt)
// is sent as one user message.
func (e OpenAIChat) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	b := openAIRequest(r, o)
	b.Messages = r.Messages
	if len(b.Messages) == 0 {
		b.Messages = []workload.Message{{Role: "user", Content: r.Prompt}}
	}
	return newJSONRequest(ctx, joinURL(base, "/v1", "/chat/completions"), b, o, sseAccept)
}

// NewRequest implements Endpoint. Options.TokenIDs, when set, replace the
// prompt text.
func (e OpenAICompletions) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	b := openAIRequest(r, o)
	prompt, err := rawPrompt(e.Name(), r, o)
	if err != nil {
		return nil, err
	}
	b.Prompt = prompt
	return newJSONRequest(ctx, joinURL(base, "/v1", "/completions"), b, o, sseAccept)
}

var openAIAPI = api{
	format:       stream.SSE,
	finishSignal: "finish_reason",
	parse:        parseOpenAI,
}

// Read implements Endpoint: content from choices[0].delta.content,
// reasoning from reasoning_content or reasoning, per-chunk token counts from
// continuous usage stats, the final usage and any llama.cpp timings kept as
// sent. The response ends with a finish_reason; [DONE] alone is not enough.
func (OpenAIChat) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&openAIAPI, body, now, rec)
}

// Read implements Endpoint, as OpenAIChat.Read with the text in
// choices[0].text.
func (OpenAICompletions) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&openAIAPI, body, now, rec)
}

// parseOpenAI reads one chunk object of either OpenAI API (they differ only
// in where the text is), and also the whole non-streamed response object,
// whose choices hold a message instead of a delta.
func parseOpenAI(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		choices    int
		usage      bool
		completion int64 = -1
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "choices":
			if s.null() {
				continue
			}
			if !s.enter('[') {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "choices is not an array")
			}
			for ; s.elem(choices); choices++ {
				if choices > 0 {
					s.skip() // n > 1 is not used by a benchmark; only the first choice counts
					continue
				}
				if err := st.openAIChoice(data); err != nil {
					return err
				}
			}
		case "usage":
			s.ws()
			start := s.i
			in, err := st.object(data, "usage")
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			completion = -1
			for u := 0; ; u++ {
				uk, ok := s.key(u)
				if !ok {
					break
				}
				if string(uk) == "completion_tokens" {
					if num, ok := s.number(); ok {
						if v, ok := atoi(num); ok {
							completion = v
						}
						continue
					}
				}
				s.skip()
			}
			if s.err != "" {
				return st.syntaxError(data)
			}
			st.usage = append(st.usage[:0], data[start:s.i]...)
			st.hasUsage, usage = true, true
		case "object":
			v, _, ok := s.str(&st.sbuf)
			if !ok {
				s.skip()
			} else if string(v) == "error" {
				e.isErr = true // vLLM's streamed ErrorResponse: {"object":"error","message":…}
			}
		case "message":
			v, _, ok := s.str(&st.mbuf)
			if !ok {
				s.skip()
			} else if len(e.errMsg) == 0 {
				e.errMsg = v
			}
		case "timings":
			// llama.cpp's OpenAI-compatible server adds its timings here.
			if s.null() {
				continue
			}
			raw := s.raw()
			if s.err == "" {
				st.timings = append(st.timings[:0], raw...)
				st.hasTimings = true
			}
		default:
			if !st.sharedField(k) {
				s.skip()
			}
		}
	}
	if err := st.done(data); err != nil {
		return err
	}
	if !e.isErr {
		e.errMsg = nil // a top-level "message" only means something in an error
	}
	e.usageChunk = usage && choices == 0
	if completion >= 0 {
		// Usage that comes with a chunk still generating (no finish yet)
		// is continuous_usage_stats: cumulative, so a chunk's own tokens are
		// the difference. Usage first seen with the finish, or alone, is
		// the total of the whole response, not one chunk's.
		if choices > 0 && !e.hasFinish {
			st.continuous = true
		}
		if st.continuous && choices > 0 {
			e.tokens = int(completion - st.prevCompletion)
		}
		st.prevCompletion = completion
	}
	return nil
}

// openAIChoice reads choices[0].
func (st *state) openAIChoice(data []byte) *trace.Error {
	s, e := &st.js, &st.ev
	in, err := st.object(data, "choices[0]")
	if err != nil || !in {
		return err
	}
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "delta", "message":
			field := "choices[0].delta"
			if string(k) == "message" {
				field = "choices[0].message"
			}
			in, err := st.object(data, field)
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			for m := 0; ; m++ {
				dk, ok := s.key(m)
				if !ok {
					break
				}
				switch string(dk) {
				case "content":
					if err := st.text(&e.text, &st.tbuf, data, "content"); err != nil {
						return err
					}
				case "reasoning_content", "reasoning":
					// Some servers send both names with the same text: keep one.
					if len(e.reasoning) > 0 {
						s.skip()
						continue
					}
					if err := st.text(&e.reasoning, &st.rbuf, data, string(dk)); err != nil {
						return err
					}
				default:
					s.skip()
				}
			}
		case "text":
			if err := st.text(&e.text, &st.tbuf, data, "text"); err != nil {
				return err
			}
		case "finish_reason":
			v, null, ok := s.str(&st.fbuf)
			if !ok {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "finish_reason is not a string")
			}
			if !null && len(v) > 0 { // some servers send "" instead of null mid-stream
				e.finish, e.hasFinish = v, true
			}
		default:
			s.skip()
		}
	}
	if s.err != "" {
		return st.syntaxError(data)
	}
	return nil
}
