package endpoint

import (
	"context"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// OpenAIResponses is OpenAI's Responses API (POST /v1/responses), as served
// by OpenAI and by vLLM. The stream is SSE with typed events
// (response.created, response.output_text.delta, response.reasoning*
// deltas, response.completed / response.incomplete / response.failed,
// error); the response is finished by completed or incomplete.
type OpenAIResponses struct{}

var _ Endpoint = OpenAIResponses{}

// Name implements Endpoint.
func (OpenAIResponses) Name() string { return "openai-responses" }

type responsesBody struct {
	Model           string             `json:"model"`
	Input           []workload.Message `json:"input"`
	MaxOutputTokens int                `json:"max_output_tokens,omitempty"`
	Temperature     float64            `json:"temperature"`
	Stream          bool               `json:"stream"`
	// Store false: a benchmark's responses are not kept on the server.
	Store bool `json:"store"`
}

// NewRequest implements Endpoint. The Responses API takes messages (a
// string input is a user message, not a raw prompt), so a completion-shaped
// request is refused at start; it has no ignore-EOS setting, so ignore_eos
// is left out and an early end shows as finish reason "stop". Usage always
// comes with the final event.
func (e OpenAIResponses) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	if err := chatOnly(e.Name(), r, o, "openai-completions"); err != nil {
		return nil, err
	}
	b := responsesBody{Model: o.Model, Input: r.Messages, MaxOutputTokens: r.MaxTokens, Temperature: r.Temperature, Stream: true}
	return newJSONRequest(ctx, joinURL(base, "/v1", "/responses"), b, o, sseAccept)
}

var responsesAPI = api{
	format:       stream.SSE,
	finishSignal: "response.completed or response.incomplete",
	parse:        parseResponses,
}

// Read implements Endpoint: text from response.output_text.delta,
// reasoning from response.reasoning_text.delta and
// response.reasoning_summary_text.delta, usage as sent in the final
// response object. The finish reason is "stop" for response.completed and
// incomplete_details.reason for response.incomplete ("max_output_tokens" →
// "length"). response.failed and the error event are server errors; an
// event without a type (another API's stream) is malformed.
func (OpenAIResponses) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&responsesAPI, body, now, rec)
}

func parseResponses(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		typ, delta, reason, status []byte
		hasDelta, whole            bool
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
		case "delta":
			v, null, ok := s.str(&st.tbuf)
			if !ok {
				if s.err != "" {
					return st.syntaxError(data)
				}
				s.skip() // a structured delta (function arguments) carries no text
				continue
			}
			if !null {
				delta, hasDelta = v, true
			}
		case "message":
			// The error event: {"type":"error","code":…,"message":…}.
			if v, null, ok := s.str(&st.mbuf); ok {
				if !null {
					e.errMsg = v
				}
				continue
			}
			s.skip()
		case "object":
			// A whole non-streamed Response object: {"object":"response",…}
			// with its fields at the top level.
			if v, _, ok := s.str(&st.sbuf); ok {
				whole = whole || string(v) == "response"
				continue
			}
			s.skip()
		case "response", "usage", "incomplete_details", "status", "output":
			if err := st.responsesObject(data, k, &reason, &status); err != nil {
				return err
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
	if whole {
		typ = responsesTypeOf(status)
		if typ == nil && len(e.errMsg) == 0 {
			return st.shapeError(data, "a response object without a final status")
		}
	}
	if e.isErr {
		return nil
	}
	return st.responsesEvent(data, typ, delta, reason, hasDelta)
}

// responsesTypeOf maps a whole response's status to the event that would
// have ended its stream.
func responsesTypeOf(status []byte) []byte {
	switch string(status) {
	case "completed":
		return []byte("response.completed")
	case "incomplete":
		return []byte("response.incomplete")
	case "failed":
		return []byte("response.failed")
	}
	return nil
}

// responsesObject reads one field of a response object (k names it; for
// "response" the whole nested object is read field by field).
func (st *state) responsesObject(data, k []byte, reason, status *[]byte) *trace.Error {
	s := &st.js
	if string(k) != "response" {
		return st.responsesField(data, k, reason, status)
	}
	in, err := st.object(data, "response")
	if err != nil || !in {
		return err
	}
	for m := 0; ; m++ {
		rk, ok := s.key(m)
		if !ok {
			break
		}
		if string(rk) == "output" {
			// A streamed response's final object repeats the whole text,
			// already recorded from its deltas.
			s.skip()
			continue
		}
		if err := st.responsesField(data, rk, reason, status); err != nil {
			return err
		}
	}
	if s.err != "" {
		return st.syntaxError(data)
	}
	return nil
}

func (st *state) responsesField(data, rk []byte, reason, status *[]byte) *trace.Error {
	s, e := &st.js, &st.ev
	switch string(rk) {
	case "status":
		if v, null, ok := s.str(&st.fbuf); ok {
			if !null {
				*status = v
			}
			return nil
		}
		s.skip()
	case "output":
		// A whole response's output items: the text of their
		// output_text parts.
		if s.null() {
			return nil
		}
		if !s.enter('[') {
			if s.err != "" {
				return st.syntaxError(data)
			}
			return st.shapeError(data, "output is not an array")
		}
		for i := 0; s.elem(i); i++ {
			in, err := st.object(data, "output[]")
			if err != nil {
				return err
			}
			if !in {
				continue
			}
			for m := 0; ; m++ {
				ik, ok := s.key(m)
				if !ok {
					break
				}
				if string(ik) != "content" || !s.enter('[') {
					s.skip()
					continue
				}
				for c := 0; s.elem(c); c++ {
					in, err := st.object(data, "content[]")
					if err != nil {
						return err
					}
					if !in {
						continue
					}
					for pk := 0; ; pk++ {
						kk, ok := s.key(pk)
						if !ok {
							break
						}
						if string(kk) == "text" {
							if err := st.text(&e.text, &st.tbuf, data, "text"); err != nil {
								return err
							}
							continue
						}
						s.skip()
					}
				}
			}
		}
	case "usage":
		if s.null() {
			return nil
		}
		s.ws()
		start := s.i
		s.skip()
		if s.err != "" {
			return st.syntaxError(data)
		}
		st.usage = append(st.usage[:0], data[start:s.i]...)
		st.hasUsage = true
	case "incomplete_details":
		in, err := st.object(data, "incomplete_details")
		if err != nil {
			return err
		}
		if !in {
			return nil
		}
		for d := 0; ; d++ {
			dk, ok := s.key(d)
			if !ok {
				break
			}
			if string(dk) == "reason" {
				if v, null, ok := s.str(&st.mbuf); ok {
					if !null {
						*reason = v
					}
					continue
				}
			}
			s.skip()
		}
	case "error":
		if s.null() {
			return nil
		}
		e.errMsg = st.errorMessage()
	default:
		s.skip()
	}
	if s.err != "" {
		return st.syntaxError(data)
	}
	return nil
}

// responsesEvent interprets the event of type typ.
func (st *state) responsesEvent(data, typ, delta, reason []byte, hasDelta bool) *trace.Error {
	e := &st.ev
	if typ == nil {
		return st.shapeError(data, "an event without a type is not the Responses API's")
	}
	switch string(typ) {
	case "response.output_text.delta":
		if hasDelta {
			e.text = delta
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if hasDelta {
			e.reasoning = delta
		}
	case "response.completed":
		e.finish, e.hasFinish = []byte("stop"), true
	case "response.incomplete":
		e.hasFinish = true
		switch string(reason) {
		case "max_output_tokens":
			e.finish = []byte("length")
		case "":
			e.finish = []byte("incomplete")
		default:
			e.finish = reason
		}
	case "response.failed", "error":
		e.isErr = true
		if len(e.errMsg) == 0 {
			e.errMsg = typ
		}
	default:
		e.errMsg = nil
	}
	return nil
}
