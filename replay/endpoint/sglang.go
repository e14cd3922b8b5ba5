package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// SGLang is SGLang's native API (POST /generate with stream true): SSE
// whose text is cumulative (each event repeats everything so far) and whose
// meta_info carries the token counts, ended by [DONE].
type SGLang struct{}

var _ Endpoint = SGLang{}

// Name implements Endpoint.
func (SGLang) Name() string { return "sglang" }

type sglangParams struct {
	MaxNewTokens int     `json:"max_new_tokens,omitempty"`
	Temperature  float64 `json:"temperature"`
	IgnoreEOS    bool    `json:"ignore_eos,omitempty"`
}

type sglangBody struct {
	Text     string       `json:"text,omitempty"`
	InputIDs []int        `json:"input_ids,omitempty"`
	Params   sglangParams `json:"sampling_params"`
	Stream   bool         `json:"stream"`
}

// NewRequest implements Endpoint: a raw prompt as text, or as input_ids
// with --send-token-ids; a chat workload is refused at start (SGLang's
// chat route is openai-chat).
func (e SGLang) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	b := sglangBody{Stream: true, Params: sglangParams{MaxNewTokens: r.MaxTokens, Temperature: r.Temperature, IgnoreEOS: r.IgnoreEOS}}
	switch {
	case o.TokenIDs != nil:
		b.InputIDs = o.TokenIDs
	case len(r.Messages) > 0:
		return nil, fmt.Errorf("sglang sends a raw prompt but request %s is a chat (messages): build the workload with the completion shape, or use openai-chat (SGLang serves /v1/chat/completions)", r.ID)
	default:
		b.Text = r.Prompt
	}
	return newJSONRequest(ctx, joinURL(base, "", "/generate"), b, o, sseAccept)
}

var sglangAPI = api{
	format:       stream.SSE,
	finishSignal: "meta_info.finish_reason",
	parse:        parseSGLang,
}

// Read implements Endpoint: each event's text is the new part of the
// cumulative text (text that does not extend the previous event's is
// malformed), its token count the growth of meta_info.completion_tokens;
// usage is the last meta_info's prompt_tokens, completion_tokens and
// cached_tokens; the finish reason is meta_info.finish_reason.type
// ("length", "stop", "abort" as sent).
func (SGLang) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&sglangAPI, body, now, rec)
}

var sglangUsageKeys = [...]string{"prompt_tokens", "completion_tokens", "cached_tokens"}

func parseSGLang(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		text, finish []byte
		hasText      bool
		counts       [len(sglangUsageKeys)][]byte
		haveCounts   bool
		completion   int64 = -1
		sawMeta      bool
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "text":
			v, null, ok := s.str(&st.tbuf)
			if !ok {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "text is not a string")
			}
			if !null {
				text, hasText = v, true
			}
		case "meta_info":
			in, err := st.object(data, "meta_info")
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			sawMeta = true
			for m := 0; ; m++ {
				mk, ok := s.key(m)
				if !ok {
					break
				}
				switch key := string(mk); key {
				case "finish_reason":
					// null, or {"type": "length"|"stop"|"abort", …}
					if s.null() {
						continue
					}
					if !s.enter('{') {
						s.skip()
						continue
					}
					for f := 0; ; f++ {
						fk, ok := s.key(f)
						if !ok {
							break
						}
						if string(fk) == "type" {
							if v, null, ok := s.str(&st.fbuf); ok {
								if !null {
									finish = v
								}
								continue
							}
						}
						if string(fk) == "message" && st.js.peek() == '"' {
							v, _, _ := s.str(&st.mbuf)
							e.errMsg = v
							continue
						}
						s.skip()
					}
				case "prompt_tokens", "completion_tokens", "cached_tokens":
					raw := s.raw()
					for i, uk := range sglangUsageKeys {
						if uk == key {
							counts[i], haveCounts = raw, true
						}
					}
					if key == "completion_tokens" {
						if v, ok := atoi(raw); ok {
							completion = v
						}
					}
				default:
					s.skip()
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
	if e.isErr {
		return nil
	}
	if !sawMeta {
		return st.shapeError(data, "an event without meta_info is not SGLang's")
	}
	if hasText {
		if !bytes.HasPrefix(text, st.pending) {
			return malformed(fmt.Sprintf("cumulative text does not extend the previous event's (%d bytes before, %d now, differing at the start): %q",
				len(st.pending), len(text), clip(text, 80)), data)
		}
		e.text = text[len(st.pending):]
		st.pending = append(st.pending[:0], text...)
	}
	if completion >= 0 {
		e.tokens = int(max(0, completion-st.prevCompletion))
		st.prevCompletion = completion
	}
	if haveCounts {
		st.usage = appendObject(st.usage[:0], sglangUsageKeys[:], counts[:])
		st.hasUsage = true
	}
	if finish != nil {
		e.finish, e.hasFinish = finish, true
		if string(finish) == "abort" {
			e.isErr = true
			if len(e.errMsg) == 0 {
				e.errMsg = []byte("the request was aborted")
			}
		}
	}
	return nil
}
