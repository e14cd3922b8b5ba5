package endpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Anthropic is Anthropic's Messages API (POST /v1/messages), as served by
// Anthropic and by gateways that speak it. The stream is SSE with named
// events (message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error); the response is finished by message_stop.
type Anthropic struct{}

var _ Endpoint = Anthropic{}

// AnthropicVersion is the anthropic-version header every request carries:
// the API version whose streaming format the reader follows.
const AnthropicVersion = "2023-06-01"

// Name implements Endpoint.
func (Anthropic) Name() string { return "anthropic" }

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicBody struct {
	Model    string             `json:"model"`
	System   string             `json:"system,omitempty"`
	Messages []anthropicMessage `json:"messages"`
	// MaxTokens is required by the API.
	MaxTokens   int     `json:"max_tokens"`
	Temperature float64 `json:"temperature"`
	Stream      bool    `json:"stream"`
}

// NewRequest implements Endpoint. The Messages API has no raw-prompt mode
// and requires max_tokens: a completion-shaped request or one without
// max_tokens is refused rather than silently changed. It has no way to
// ignore the end of sequence either; ignore_eos is left out (every
// workload asks for it by default), so an answer may end early, which its
// finish reason "stop" instead of "length" shows in the trace. System
// messages go to the top-level system field, as the API wants them.
func (e Anthropic) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	if err := chatOnly(e.Name(), r, o, "a raw-prompt API"); err != nil {
		return nil, err
	}
	if r.MaxTokens <= 0 {
		return nil, fmt.Errorf("anthropic requires max_tokens but request %s has none: build the workload with an output length", r.ID)
	}
	b := anthropicBody{Model: o.Model, MaxTokens: r.MaxTokens, Temperature: r.Temperature, Stream: true}
	for _, m := range r.Messages {
		if m.Role == "system" {
			if b.System != "" {
				b.System += "\n"
			}
			b.System += m.Content
			continue
		}
		b.Messages = append(b.Messages, anthropicMessage{Role: m.Role, Content: m.Content})
	}
	if len(b.Messages) == 0 {
		return nil, fmt.Errorf("anthropic needs a user message but request %s has only system messages", r.ID)
	}
	key := o.APIKey
	o.APIKey = "" // no bearer token: the key goes into x-api-key only
	req, err := newJSONRequest(ctx, joinURL(base, "/v1", "/messages"), b, o, sseAccept)
	if err != nil {
		return nil, err
	}
	req.Header.Set("anthropic-version", AnthropicVersion)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	return req, nil
}

// AuthHeaders sets the headers that carry key on a request to an API: a
// bearer token, or Anthropic's x-api-key with its version header.
func AuthHeaders(api string, h http.Header, key string) {
	if api == "anthropic" {
		h.Set("anthropic-version", AnthropicVersion)
		if key != "" {
			h.Set("x-api-key", key)
		}
		return
	}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

var anthropicAPI = api{
	format:       stream.SSE,
	finishSignal: "message_stop",
	parse:        parseAnthropic,
}

// Read implements Endpoint: text from content_block_delta text_delta,
// reasoning from thinking_delta, the usage of message_start (input and
// cache counts) merged with message_delta's (output count, cumulative),
// stop_reason mapped to the OpenAI words ("max_tokens" → "length",
// "end_turn" and "stop_sequence" → "stop", another kept as it is). The
// response succeeds only with message_stop. An error event
// ({"type":"error","error":{"type":"overloaded_error",…}}) is a server
// error; an event without a type (another API's stream) is malformed.
func (Anthropic) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&anthropicAPI, body, now, rec)
}

// anthUsageKeys are the usage counts kept, in the order written.
var anthUsageKeys = [...]string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"}

func parseAnthropic(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		typ                   []byte
		stop                  []byte
		hasStop, usageChanged bool
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "type":
			v, null, ok := s.str(&st.sbuf)
			if !ok || null {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "type is not a string")
			}
			typ = v
		case "delta", "content_block":
			in, err := st.object(data, string(k))
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
				case "text":
					if err := st.text(&e.text, &st.tbuf, data, "text"); err != nil {
						return err
					}
				case "thinking":
					if err := st.text(&e.reasoning, &st.rbuf, data, "thinking"); err != nil {
						return err
					}
				case "stop_reason":
					v, null, ok := s.str(&st.fbuf)
					if !ok {
						if s.err != "" {
							return st.syntaxError(data)
						}
						return st.shapeError(data, "stop_reason is not a string")
					}
					if !null {
						stop, hasStop = v, true
					}
				default:
					s.skip()
				}
			}
		case "usage":
			ch, err := st.anthropicUsage(data)
			if err != nil {
				return err
			}
			usageChanged = usageChanged || ch
		case "message":
			// message_start's message: its usage holds the input counts.
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
				if string(mk) == "usage" {
					ch, err := st.anthropicUsage(data)
					if err != nil {
						return err
					}
					usageChanged = usageChanged || ch
					continue
				}
				s.skip()
			}
		case "content":
			// A non-streamed Message: content is a list of blocks.
			if s.null() {
				continue
			}
			if !s.enter('[') {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "content is not an array")
			}
			for b := 0; s.elem(b); b++ {
				in, err := st.object(data, "content[]")
				if err != nil {
					return err
				}
				if !in {
					continue
				}
				for m := 0; ; m++ {
					bk, ok := s.key(m)
					if !ok {
						break
					}
					switch string(bk) {
					case "text":
						if err := st.text(&e.text, &st.tbuf, data, "text"); err != nil {
							return err
						}
					case "thinking":
						if err := st.text(&e.reasoning, &st.rbuf, data, "thinking"); err != nil {
							return err
						}
					default:
						s.skip()
					}
				}
			}
		case "stop_reason":
			v, null, ok := s.str(&st.fbuf)
			if !ok {
				s.skip()
			} else if !null {
				stop, hasStop = v, true
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
	if typ == nil {
		return st.shapeError(data, "an event without a type is not Anthropic's")
	}
	if usageChanged {
		st.usage = st.usage[:0]
		st.usage = append(st.usage, '{')
		first := true
		for i, k := range anthUsageKeys {
			if !st.anthHave[i] {
				continue
			}
			if !first {
				st.usage = append(st.usage, ',')
			}
			first = false
			st.usage = append(st.usage, '"')
			st.usage = append(st.usage, k...)
			st.usage = append(st.usage, '"', ':')
			st.usage = strconv.AppendInt(st.usage, st.anthUsage[i], 10)
		}
		st.usage = append(st.usage, '}')
		st.hasUsage = true
	}
	if hasStop {
		st.pending = append(st.pending[:0], anthropicFinish(stop)...)
		st.hasPending = true
	}
	switch string(typ) {
	case "message_stop", "message": // "message" is a whole non-streamed response
		e.hasFinish = true
		e.finish = []byte("stop")
		if st.hasPending {
			e.finish = st.pending
		}
	case "error":
		e.isErr = true
	}
	return nil
}

func anthropicFinish(b []byte) []byte {
	switch string(b) {
	case "max_tokens":
		return []byte("length")
	case "end_turn", "stop_sequence":
		return []byte("stop")
	}
	return b
}

// anthropicUsage reads a usage object's counts into st.anthUsage. Values
// that are not integers are ignored.
func (st *state) anthropicUsage(data []byte) (bool, *trace.Error) {
	s := &st.js
	in, err := st.object(data, "usage")
	if err != nil || !in {
		return false, err
	}
	changed := false
	for u := 0; ; u++ {
		uk, ok := s.key(u)
		if !ok {
			break
		}
		i := -1
		for j, k := range anthUsageKeys {
			if k == string(uk) {
				i = j
			}
		}
		if i < 0 {
			s.skip()
			continue
		}
		num, ok := s.number()
		if !ok {
			s.skip()
			continue
		}
		if v, ok := atoi(num); ok {
			st.anthUsage[i], st.anthHave[i], changed = v, true, true
		}
	}
	if s.err != "" {
		return false, st.syntaxError(data)
	}
	return changed, nil
}
