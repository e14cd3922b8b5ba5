package endpoint

import (
	"context"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// OllamaGenerate is Ollama's /api/generate: NDJSON lines, the last with
// "done": true and the server's own counts and durations.
//
// Ollama has no way to ignore end-of-sequence, so a request's IgnoreEOS is
// not sent: a model that stops early stops, and the trace shows the
// shortfall (eval_count below max_tokens, done_reason "stop") as it is.
type OllamaGenerate struct{}

// OllamaChat is Ollama's /api/chat; see OllamaGenerate.
type OllamaChat struct{}

var (
	_ Endpoint = OllamaGenerate{}
	_ Endpoint = OllamaChat{}
)

// Name implements Endpoint.
func (OllamaGenerate) Name() string { return "ollama-generate" }

// Name implements Endpoint.
func (OllamaChat) Name() string { return "ollama-chat" }

type ollamaOptions struct {
	NumPredict  int     `json:"num_predict,omitempty"`
	Temperature float64 `json:"temperature"`
}

type ollamaBody struct {
	Model    string             `json:"model"`
	Prompt   string             `json:"prompt,omitempty"`
	Messages []workload.Message `json:"messages,omitempty"`
	// Raw sends the prompt without the model's template, so the server sees
	// exactly the tokens the workload counted.
	Raw     bool          `json:"raw,omitempty"`
	Stream  bool          `json:"stream"`
	Options ollamaOptions `json:"options"`
}

func ollamaRequest(r *workload.Request, o Options) ollamaBody {
	return ollamaBody{
		Model:   o.Model,
		Stream:  true,
		Options: ollamaOptions{NumPredict: r.MaxTokens, Temperature: r.Temperature},
	}
}

// NewRequest implements Endpoint. The prompt is sent raw (no template);
// Ollama takes no token ids, so Options.TokenIDs is not used.
func (e OllamaGenerate) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	if len(r.Messages) > 0 {
		return nil, errChatShape(e.Name(), r)
	}
	if r.Prompt == "" {
		return nil, errNoPrompt(e.Name(), r)
	}
	b := ollamaRequest(r, o)
	b.Prompt, b.Raw = r.Prompt, true
	return newJSONRequest(ctx, joinURL(base, "/api", "/generate"), b, o, ndjsonAccept)
}

// NewRequest implements Endpoint. A completion-shaped request (a prompt) is
// sent as one user message.
func (e OllamaChat) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	b := ollamaRequest(r, o)
	b.Messages = r.Messages
	if len(b.Messages) == 0 {
		b.Messages = []workload.Message{{Role: "user", Content: r.Prompt}}
	}
	return newJSONRequest(ctx, joinURL(base, "/api", "/chat"), b, o, ndjsonAccept)
}

var ollamaAPI = api{
	format:       stream.NDJSON,
	finishSignal: `"done": true`,
	parse:        parseOllama,
}

// Read implements Endpoint: text from response (generate) or
// message.content (chat), thinking text as reasoning. The finish reason is
// done_reason, or "done" if the server sent none. rec.Timings is an object
// of the final line's total_duration, load_duration, prompt_eval_count,
// prompt_eval_duration, eval_count and eval_duration (nanoseconds and
// tokens), each value as sent.
func (OllamaGenerate) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&ollamaAPI, body, now, rec)
}

// Read implements Endpoint; see OllamaGenerate.Read.
func (OllamaChat) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&ollamaAPI, body, now, rec)
}

var ollamaTimingKeys = [...]string{"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"}

func parseOllama(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		done, haveTimings bool
		reason            []byte
		timings           [len(ollamaTimingKeys)][]byte
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch key := string(k); key {
		case "response":
			if err := st.text(&e.text, &st.tbuf, data, "response"); err != nil {
				return err
			}
		case "thinking":
			if err := st.text(&e.reasoning, &st.rbuf, data, "thinking"); err != nil {
				return err
			}
		case "message":
			in, err := st.object(data, "message")
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			for m := 0; ; m++ {
				mk, ok := s.key(m)
				if !ok {
					break
				}
				switch string(mk) {
				case "content":
					if err := st.text(&e.text, &st.tbuf, data, "message.content"); err != nil {
						return err
					}
				case "thinking":
					if err := st.text(&e.reasoning, &st.rbuf, data, "message.thinking"); err != nil {
						return err
					}
				default:
					s.skip()
				}
			}
		case "done":
			v, ok := s.boolean()
			if !ok {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "done is not a boolean")
			}
			done = v
		case "done_reason":
			if v, null, ok := s.str(&st.fbuf); ok {
				if !null {
					reason = v
				}
				continue
			}
			s.skip()
		case "total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration":
			raw := s.raw()
			for i, tk := range ollamaTimingKeys {
				if tk == key {
					timings[i], haveTimings = raw, true
				}
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
	if haveTimings {
		st.timings = appendObject(st.timings[:0], ollamaTimingKeys[:], timings[:])
		st.hasTimings = true
	}
	if done {
		e.hasFinish = true
		e.finish = reason
		if len(reason) == 0 {
			e.finish = []byte("done")
		}
	}
	return nil
}
