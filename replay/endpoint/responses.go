package endpoint

import (
	"slices"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// openAIResponses is OpenAI's Responses API (POST /v1/responses), as served
// by OpenAI and by vLLM. The stream is SSE with typed events
// (response.created, response.output_text.delta, response.reasoning*
// deltas, response.completed / response.incomplete / response.failed,
// error); the response is finished by completed or incomplete.
//
// The request: the API takes messages (a string input is a user message,
// not a raw prompt), so a completion-shaped request is refused at start;
// it has no ignore-EOS setting, so ignore_eos is left out and an early end
// shows as finish reason "stop". Usage always comes with the final event.
//
// The answer: text from response.output_text.delta, reasoning from
// response.reasoning_text.delta and response.reasoning_summary_text.delta,
// usage as sent in the final response object. The finish reason is "stop"
// for response.completed and incomplete_details.reason for
// response.incomplete ("max_output_tokens" → "length"). response.failed
// and the error event are server errors; an event without a type (another
// API's stream) is malformed.
var openAIResponses = &adapter{name: "openai-responses", prefix: "/v1", path: "/responses", accept: sseAccept, needModel: true,
	input: input{shape: chatOnly, instead: "openai-completions"}, reader: responsesReader,
	// store false: a benchmark's responses are not kept on the server.
	body: func(q *call) (object, error) {
		return object{m("model", q.o.Model), m("input", q.messages), opt("max_output_tokens", q.r.MaxTokens), m("temperature", q.r.Temperature),
			m("stream", true), m("store", false)}, nil
	}}

var responsesReader = reader{format: stream.SSE, finishSignal: "response.completed or response.incomplete", interpret: interpretResponses,
	fields: top(append([]field{
		{key: "type", kind: kStr, slot: respType},
		// A structured delta (function arguments) carries no text.
		{key: "delta", kind: kStr, slot: respDelta, lax: true},
		// The error event: {"type":"error","code":…,"message":…}.
		{key: "message", kind: kStr, slot: respMessage, lax: true},
		// A whole non-streamed Response object: {"object":"response",…}
		// with its fields at the top level, and its output's text.
		{key: "object", kind: kStr, slot: respObject, lax: true},
		// A reasoning item's text is reasoning, a message's the answer.
		{key: "output", kind: kArray, items: true, sub: in("output[]", field{key: "type", kind: kStr, slot: itemType, lax: true},
			field{key: "content", kind: kArray, lax: true, sub: in("output[].content[]", field{key: "text", kind: kText})})},
		// A streamed response's final object: its output repeats the
		// whole text, already recorded from its deltas, and is skipped.
		{key: "response", kind: kObject, sub: in("response", slices.Concat(responseFields, []field{{key: "error", kind: kErrorText}})...)},
	}, responseFields...)...),
}

// What a Responses event's walk captures.
const (
	respType    = 1
	respDelta   = 2
	respMessage = 3
	respObject  = 4
	respStatus  = 5
	respReason  = 6 // incomplete_details.reason
)

// responseFields are the members of a response object read both in the
// final event's response and in a whole non-streamed response.
var responseFields = []field{
	{key: "status", kind: kStr, slot: respStatus, lax: true},
	{key: "usage", kind: kUsage},
	{key: "incomplete_details", kind: kObject, sub: in("incomplete_details", field{key: "reason", kind: kStr, slot: respReason, lax: true})},
}

func interpretResponses(st *state, data []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if len(e.errMsg) == 0 {
		e.errMsg = c.str(respMessage)
	}
	typ := c.str(respType)
	if string(c.str(respObject)) == "response" {
		// A whole response: its status says which event would have ended
		// its stream.
		switch typ = nil; string(c.str(respStatus)) {
		case "completed":
			typ = []byte("response.completed")
		case "incomplete":
			typ = []byte("response.incomplete")
		case "failed":
			typ = []byte("response.failed")
		}
		if typ == nil && len(e.errMsg) == 0 {
			return st.shapeError(data, "a response object without a final status")
		}
	}
	if e.isErr {
		return nil
	}
	if typ == nil {
		return st.shapeError(data, "an event without a type is not the Responses API's")
	}
	delta := c.str(respDelta)
	switch string(typ) {
	case "response.output_text.delta":
		e.text = delta
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		e.reasoning = delta
	case "response.completed":
		e.finish, e.hasFinish = wordStop, true
	case "response.incomplete":
		e.finish, e.hasFinish = c.str(respReason), true
		if len(e.finish) == 0 {
			e.finish = []byte("incomplete")
		}
		e.finish = st.word(e.finish, "max_output_tokens", "length")
	case "response.failed", "error":
		e.isErr = true
		if len(e.errMsg) == 0 {
			e.errMsg = typ
		}
	}
	return nil
}
