package endpoint

import (
	"fmt"
	"math/bits"
	"net/http"
	"strconv"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// anthropic is Anthropic's Messages API (POST /v1/messages), as served by
// Anthropic and by gateways that speak it. The stream is SSE with named
// events (message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error); the response is finished by message_stop.
//
// The request: the Messages API has no raw-prompt mode and requires
// max_tokens, so a completion-shaped request or one without max_tokens is
// refused rather than silently changed. It has no way to ignore the end of
// sequence either; ignore_eos is left out (every workload asks for it by
// default), so an answer may end early, which its finish reason "stop"
// instead of "length" shows in the trace. System messages go to the
// top-level system field, as the API wants them; the key goes in x-api-key
// (AuthHeaders).
//
// The answer: text from content_block_delta text_delta, reasoning from
// thinking_delta, the usage of message_start (input and cache counts)
// merged with message_delta's (output count, cumulative), stop_reason
// mapped to the OpenAI words ("max_tokens" → "length", "end_turn" and
// "stop_sequence" → "stop", another kept as it is). The response succeeds
// only with message_stop. An error event
// ({"type":"error","error":{"type":"overloaded_error",…}}) is a server
// error; an event without a type (another API's stream) is malformed.
var anthropic = &adapter{name: "anthropic", prefix: "/v1", path: "/messages", accept: sseAccept, needModel: true,
	input: input{shape: chatOnly, instead: "a raw-prompt API"}, body: anthropicRequest, reader: anthropicReader}

var anthropicReader = reader{format: stream.SSE, finishSignal: "message_stop", interpret: interpretAnthropic,
	fields: top(field{key: "type", kind: kStr, slot: antType},
		field{key: "delta", kind: kObject, sub: in("delta", anthropicBlock...)},
		field{key: "content_block", kind: kObject, sub: in("content_block", anthropicBlock...)},
		field{key: "usage", kind: kObject, sub: anthropicUsage("usage")},
		// message_start's message: its usage holds the input counts.
		field{key: "message", kind: kObject, sub: in("message", field{key: "usage", kind: kObject, sub: anthropicUsage("message.usage")})},
		// A non-streamed Message: content is a list of blocks.
		field{key: "content", kind: kArray, sub: in("content[]", anthropicBlock[:2]...)},
		field{key: "stop_reason", kind: kStr, slot: antStop, lax: true})}

// AnthropicVersion is the anthropic-version header every request carries:
// the API version whose streaming format the reader follows.
const AnthropicVersion = "2023-06-01"

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

func anthropicRequest(q *call) (object, error) {
	r := q.r
	if r.MaxTokens <= 0 {
		return nil, fmt.Errorf("anthropic requires max_tokens but request %s has none: build the workload with an output length", r.ID)
	}
	system, msgs := "", make([]workload.Message, 0, len(q.messages))
	for _, msg := range q.messages {
		if msg.Role != "system" {
			msgs = append(msgs, msg)
		} else if system == "" {
			system = msg.Content
		} else {
			system += "\n" + msg.Content
		}
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("anthropic needs a user message but request %s has only system messages", r.ID)
	}
	// max_tokens is required by the API.
	return object{m("model", q.o.Model), opt("system", system), m("messages", msgs), m("max_tokens", r.MaxTokens),
		m("temperature", r.Temperature), m("stream", true)}, nil
}

// What an Anthropic event's walk captures.
const (
	antType = 1 // "type"
	antStop = 2 // stop_reason, of message_delta's delta or a whole message
)

// anthropicBlock is a content block or a delta: text, thinking, and (in
// message_delta's delta) the stop reason.
var anthropicBlock = []field{{key: "text", kind: kText}, {key: "thinking", kind: kReasoning},
	{key: "stop_reason", kind: kStr, slot: antStop}}

// anthUsageKeys are the usage counts kept, in the order written; they are
// captured in raw slots 1…4.
var anthUsageKeys = [...]string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"}

func anthropicUsage(path string) *fields { return in(path, counted(anthUsageKeys[:]...)...) }

func interpretAnthropic(st *state, data []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if err := st.need(data, "an event without a type is not Anthropic's", 1<<antType); err != nil || e.isErr {
		return err
	}
	// Counts that are not integers are ignored.
	changed := false
	for i := range anthUsageKeys[:min(len(anthUsageKeys), bits.Len16(c.rawn))] {
		if v, ok := atoi(c.raw(1 + i)); ok {
			st.anthUsage[i], st.anthHave[i], changed = v, true, true
		}
	}
	if changed {
		st.usage = append(st.usage[:0], '{')
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
	if stop := c.str(antStop); len(stop) > 0 {
		st.pending = append(st.pending[:0], st.word(stop, "max_tokens", "length", "end_turn", "stop", "stop_sequence", "stop")...)
		st.hasPending = true
	}
	switch string(c.str(antType)) {
	case "message_stop", "message": // "message" is a whole non-streamed response
		e.finish, e.hasFinish = wordStop, true
		if st.hasPending {
			e.finish = st.pending
		}
	case "error":
		e.isErr = true
	}
	return nil
}
