package endpoint

import (
	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// llamaCpp is llama.cpp's native completion API (POST /completion): SSE
// without [DONE], ended by an event with "stop": true that also carries the
// server's own timings. Options.TokenIDs, when set, replace the prompt text.
//
// The answer: the finish reason is llama.cpp's stop_type mapped to the
// OpenAI words ("limit" → "length", "eos" and "word" → "stop"; another
// value is kept as it is; "stop" if the server gave none). rec.Timings is
// the final `timings` object as sent; rec.Usage holds the final event's own
// counts (tokens_predicted, tokens_evaluated, tokens_cached, truncated),
// each value as sent. With return_tokens each event lists its token ids,
// which gives a true per-chunk token count when an event carries several
// tokens (or none, while a multi-byte character is incomplete).
var llamaCpp = &adapter{name: "llamacpp", path: "/completion", accept: sseAccept,
	input: input{shape: rawOrIDs, instead: "a chat API"}, body: llamaCppRequest,
	reader: reader{format: stream.SSE, finishSignal: `"stop": true`, interpret: interpretLlamaCpp,
		fields: top(append(counted(llamaUsageKeys[:]...),
			field{key: "content", kind: kText}, field{key: "stop", kind: kBool, slot: llamaStop},
			field{key: "stop_type", kind: kStr, slot: llamaType, lax: true},
			// Before stop_type existed: stopped_limit, or stopped_eos and
			// stopped_word, which end as "stop" as no word at all does.
			field{key: "stopped_limit", kind: kBool, slot: llamaLimit, lax: true},
			field{key: "timings", kind: kTimings}, field{key: "tokens", kind: kCount})...)}}

// llamaCppRequest: model is ignored by llama-server but used by routers in
// front of it. cache_prompt is sent only when Options.PromptCache says so:
// replay turns it off when prompts are salted (belt and braces: the salt
// already makes them differ) and leaves the server's default (on)
// otherwise, so cache studies (--salt off, --prefix shared) reach
// llama.cpp's prompt cache.
func llamaCppRequest(q *call) (object, error) {
	r, o := q.r, q.o
	var cache *bool
	if o.PromptCache == "on" || o.PromptCache == "off" {
		v := o.PromptCache == "on"
		cache = &v
	}
	return object{opt("model", o.Model), m("prompt", q.prompt), opt("n_predict", r.MaxTokens), m("temperature", r.Temperature),
		opt("ignore_eos", r.IgnoreEOS), opt("cache_prompt", cache), m("stream", true), opt("return_tokens", o.ContinuousUsage)}, nil
}

// What a llama.cpp event's walk captures; the usage counts go to raw slots
// 1…4.
const (
	llamaStop  = 1
	llamaType  = 2
	llamaLimit = 3
)

var llamaUsageKeys = [...]string{"tokens_predicted", "tokens_evaluated", "tokens_cached", "truncated"}

func interpretLlamaCpp(st *state, _ []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if st.counts(&st.usage, llamaUsageKeys[:]...) {
		st.hasUsage = true
	}
	if !c.flag(llamaStop) {
		return nil
	}
	typ := c.str(llamaType)
	e.hasFinish = true
	switch {
	case len(typ) > 0:
		e.finish = st.word(typ, "limit", "length", "eos", "stop", "word", "stop")
	case c.flag(llamaLimit):
		e.finish = wordLength
	default: // eos, word, or nothing said
		e.finish = wordStop
	}
	return nil
}
