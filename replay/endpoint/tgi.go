package endpoint

import (
	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// tgi is Hugging Face Text Generation Inference's native streaming API
// (POST /generate_stream): SSE, one token object per event, the last event
// also carrying generated_text and details. It takes a raw prompt as text;
// TGI has no ignore-EOS setting, so it is left out.
//
// The answer: text from token.text (a special token's text is not output
// text but still counts as one token), one token per token object, usage
// {"generated_tokens","input_length"} from the final details,
// finish_reason mapped ("eos_token" and "stop_sequence" → "stop", "length"
// as is). {"error":…,"error_type":…} is a server error.
var tgi = &adapter{name: "tgi", path: "/generate_stream", accept: sseAccept,
	input: input{shape: rawText, instead: "openai-chat (TGI serves /v1/chat/completions)", idsField: "text"},
	// Temperature must be strictly positive for TGI: 0, greedy, is
	// do_sample false with no temperature.
	body: func(q *call) (object, error) {
		var t *float64
		if q.r.Temperature > 0 {
			t = &q.r.Temperature
		}
		return object{m("inputs", q.r.Prompt), m("parameters", object{opt("max_new_tokens", q.r.MaxTokens), opt("temperature", t),
			m("do_sample", t != nil), m("details", true)}), m("stream", true)}, nil
	},
	reader: reader{format: stream.SSE, finishSignal: "details.finish_reason", interpret: interpretTGI,
		fields: top(
			field{key: "token", kind: kObject, slot: tgiToken, sub: in("token",
				field{key: "text", kind: kText}, field{key: "special", kind: kBool, slot: tgiSpecial, lax: true})},
			field{key: "details", kind: kObject, sub: in("details", append(counted(tgiUsageKeys[:]...),
				field{key: "finish_reason", kind: kStr, slot: tgiFinish})...)}),
	}}

// What a TGI event's walk captures; the usage counts go to raw slots 1…2.
const (
	tgiToken   = 1
	tgiSpecial = 2
	tgiFinish  = 3
)

var tgiUsageKeys = [...]string{"generated_tokens", "input_length"}

func interpretTGI(st *state, data []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if err := st.need(data, "an event without a token object is not TGI's", 1<<tgiToken|1<<tgiFinish); err != nil || e.isErr {
		return err
	}
	if c.has(tgiToken) {
		e.tokens = 1
		if c.flag(tgiSpecial) {
			e.text = nil
		}
	}
	if c.has(tgiFinish) {
		e.finish, e.hasFinish = st.word(c.str(tgiFinish), "eos_token", "stop", "stop_sequence", "stop"), true
	}
	if st.counts(&st.usage, tgiUsageKeys[:]...) {
		st.hasUsage = true
	}
	return nil
}
