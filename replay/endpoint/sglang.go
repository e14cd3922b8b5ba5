package endpoint

import (
	"bytes"
	"fmt"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// sglang is SGLang's native API (POST /generate with stream true): SSE
// whose text is cumulative (each event repeats everything so far) and whose
// meta_info carries the token counts, ended by [DONE]. The prompt is a raw
// prompt as text, or input_ids with --send-token-ids.
//
// The answer: each event's text is the new part of the cumulative text
// (text that does not extend the previous event's is malformed), its token
// count the growth of meta_info.completion_tokens; usage is the last
// meta_info's prompt_tokens, completion_tokens and cached_tokens; the
// finish reason is meta_info.finish_reason.type ("length", "stop" as sent;
// "abort" is a server error with the finish reason's message).
var sglang = &adapter{name: "sglang", path: "/generate", accept: sseAccept,
	input: input{shape: rawOrIDs, instead: "openai-chat (SGLang serves /v1/chat/completions)"},
	body: func(q *call) (object, error) {
		text, _ := q.prompt.(string)
		ids, _ := q.prompt.([]int)
		return object{opt("text", text), opt("input_ids", ids), m("sampling_params", object{opt("max_new_tokens", q.r.MaxTokens),
			m("temperature", q.r.Temperature), opt("ignore_eos", q.r.IgnoreEOS)}), m("stream", true)}, nil
	},
	reader: reader{format: stream.SSE, finishSignal: "meta_info.finish_reason", interpret: interpretSGLang,
		fields: top(field{key: "text", kind: kStr, slot: sgText},
			field{key: "meta_info", kind: kObject, slot: sgMeta, sub: in("meta_info", append(counted(sglangUsageKeys[:]...),
				// null, or {"type": "length"|"stop"|"abort", "message": …}
				field{key: "finish_reason", kind: kObject, lax: true, sub: in("meta_info.finish_reason",
					field{key: "type", kind: kStr, slot: sgFinish, lax: true}, field{key: "message", kind: kStr, slot: sgMessage, lax: true})})...)}),
	}}

// What an SGLang event's walk captures; the usage counts go to raw slots
// 1…3.
const (
	sgText    = 1
	sgMeta    = 2
	sgFinish  = 3
	sgMessage = 4
)

var sglangUsageKeys = [...]string{"prompt_tokens", "completion_tokens", "cached_tokens"}

func interpretSGLang(st *state, data []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if err := st.need(data, "an event without meta_info is not SGLang's", 1<<sgMeta); err != nil || e.isErr {
		return err
	}
	if text := c.str(sgText); c.has(sgText) {
		if !bytes.HasPrefix(text, st.pending) {
			return malformed(fmt.Sprintf("cumulative text does not extend the previous event's (%d bytes before, %d now, differing at the start): %q",
				len(st.pending), len(text), clip(text, 80)), data)
		}
		e.text = text[len(st.pending):]
		st.pending = append(st.pending[:0], text...)
	}
	if completion, ok := atoi(c.raw(2)); ok && completion >= 0 {
		e.tokens = int(max(0, completion-st.prevCompletion))
		st.prevCompletion = completion
	}
	if st.counts(&st.usage, sglangUsageKeys[:]...) {
		st.hasUsage = true
	}
	if c.has(sgFinish) {
		e.finish, e.hasFinish = c.str(sgFinish), true
		if string(e.finish) == "abort" {
			e.isErr, e.errMsg = true, c.str(sgMessage)
			if len(e.errMsg) == 0 {
				e.errMsg = []byte("the request was aborted")
			}
		}
	}
	return nil
}
