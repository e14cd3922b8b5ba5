package endpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TGI is Hugging Face Text Generation Inference's native streaming API
// (POST /generate_stream): SSE, one token object per event, the last event
// also carrying generated_text and details.
type TGI struct{}

var _ Endpoint = TGI{}

// Name implements Endpoint.
func (TGI) Name() string { return "tgi" }

type tgiParams struct {
	MaxNewTokens int `json:"max_new_tokens,omitempty"`
	// Temperature must be strictly positive for TGI; 0 means greedy,
	// which is do_sample false with no temperature.
	Temperature *float64 `json:"temperature,omitempty"`
	DoSample    bool     `json:"do_sample"`
	Details     bool     `json:"details"`
}

type tgiBody struct {
	Inputs     string    `json:"inputs"`
	Parameters tgiParams `json:"parameters"`
	Stream     bool      `json:"stream"`
}

// NewRequest implements Endpoint. /generate_stream takes a raw prompt:
// a chat workload or token ids are refused at start (TGI's chat route is
// openai-chat). TGI has no ignore-EOS setting; it is left out.
func (e TGI) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.TokenIDs != nil {
		return nil, fmt.Errorf("tgi takes text, not token ids: leave out --send-token-ids")
	}
	if len(r.Messages) > 0 {
		return nil, fmt.Errorf("tgi sends a raw prompt but request %s is a chat (messages): build the workload with the completion shape, or use openai-chat (TGI serves /v1/chat/completions)", r.ID)
	}
	b := tgiBody{Inputs: r.Prompt, Stream: true, Parameters: tgiParams{MaxNewTokens: r.MaxTokens, Details: true}}
	if r.Temperature > 0 {
		t := r.Temperature
		b.Parameters.Temperature, b.Parameters.DoSample = &t, true
	}
	return newJSONRequest(ctx, joinURL(base, "", "/generate_stream"), b, o, sseAccept)
}

var tgiAPI = api{
	format:       stream.SSE,
	finishSignal: "details.finish_reason",
	parse:        parseTGI,
}

// Read implements Endpoint: text from token.text (a special token's text
// is not output text but still counts as one token), one token per token
// object, usage {"generated_tokens","input_length"} from the final
// details, finish_reason mapped ("eos_token" and "stop_sequence" →
// "stop", "length" as is). {"error":…,"error_type":…} is a server error.
func (TGI) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&tgiAPI, body, now, rec)
}

var tgiUsageKeys = [...]string{"generated_tokens", "input_length"}

func parseTGI(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		counts     [len(tgiUsageKeys)][]byte
		haveCounts bool
		sawToken   bool
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "token":
			in, err := st.object(data, "token")
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			sawToken = true
			var text []byte
			special := false
			for m := 0; ; m++ {
				tk, ok := s.key(m)
				if !ok {
					break
				}
				switch string(tk) {
				case "text":
					if err := st.text(&text, &st.tbuf, data, "token.text"); err != nil {
						return err
					}
				case "special":
					v, ok := s.boolean()
					if !ok {
						s.skip()
					}
					special = v
				default:
					s.skip()
				}
			}
			e.tokens = 1
			if !special {
				e.text = text
			}
		case "details":
			in, err := st.object(data, "details")
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
				switch key := string(dk); key {
				case "finish_reason":
					v, null, ok := s.str(&st.fbuf)
					if !ok {
						if s.err != "" {
							return st.syntaxError(data)
						}
						return st.shapeError(data, "finish_reason is not a string")
					}
					if !null {
						e.hasFinish = true
						switch string(v) {
						case "eos_token", "stop_sequence":
							e.finish = []byte("stop")
						default:
							e.finish = v
						}
					}
				case "generated_tokens", "input_length":
					raw := s.raw()
					for i, uk := range tgiUsageKeys {
						if uk == key {
							counts[i], haveCounts = raw, true
						}
					}
				default:
					s.skip()
				}
			}
		case "error_type":
			s.skip()
		default:
			if !st.sharedField(k) {
				s.skip()
			}
		}
	}
	if err := st.done(data); err != nil {
		return err
	}
	if e.isErr {
		return nil
	}
	if !sawToken && !e.hasFinish {
		return st.shapeError(data, "an event without a token object is not TGI's")
	}
	if haveCounts {
		st.usage = appendObject(st.usage[:0], tgiUsageKeys[:], counts[:])
		st.hasUsage = true
	}
	return nil
}
