package endpoint

import (
	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// openAIChat is the OpenAI chat completions API (/v1/chat/completions), as
// served by vLLM, SGLang, llama.cpp, TGI and OpenAI itself: content from
// choices[0].delta.content, reasoning from reasoning_content or reasoning,
// per-chunk token counts from continuous usage stats, the final usage and
// any llama.cpp timings kept as sent. The response ends with a
// finish_reason; [DONE] alone is not enough. The role-only delta that
// opens a stream is a chunk without text.
var openAIChat = &adapter{name: "openai-chat", prefix: "/v1", path: "/chat/completions", accept: sseAccept, needModel: true,
	input: input{shape: chatOrPrompt}, body: openAIRequest, reader: openAIReader}

// openAICompletions is the OpenAI legacy completions API (/v1/completions):
// a raw prompt, exact to the token, or the token ids themselves; read as
// openAIChat with the text in choices[0].text.
var openAICompletions = &adapter{name: "openai-completions", prefix: "/v1", path: "/completions", accept: sseAccept, needModel: true,
	input: input{shape: rawOrIDs, instead: "a chat API"}, body: openAIRequest, reader: openAIReader}

// openAIRequest is the body of both OpenAI APIs. max_tokens is sent, not
// max_completion_tokens: vLLM, SGLang, llama.cpp and TGI all accept it,
// while the newer name is not known everywhere. continuous_usage_stats is
// vLLM's per-chunk usage and ignore_eos a vLLM/SGLang/llama.cpp extension
// (OpenAI itself rejects it): each is sent only when asked for.
func openAIRequest(q *call) (object, error) {
	b := object{m("model", q.o.Model), opt("messages", q.messages)}
	if q.prompt != nil {
		b = append(b, m("prompt", q.prompt))
	}
	return append(b, m("stream", true), m("stream_options", object{m("include_usage", true), opt("continuous_usage_stats", q.o.ContinuousUsage)}),
		opt("max_tokens", q.r.MaxTokens), m("temperature", q.r.Temperature), opt("ignore_eos", q.r.IgnoreEOS)), nil
}

// What an OpenAI event's walk captures.
const (
	oaiRole    = 1 // choices[0].delta.role
	oaiObject  = 2 // "object"
	oaiMessage = 3 // a top-level "message" (vLLM's streamed ErrorResponse)
	oaiFinish  = 4 // choices[0].finish_reason
	oaiUsage   = 5 // a usage object was sent
	// raw
	oaiCompletion = 1 // usage.completion_tokens
)

// openAIMessage is a choice's delta (streamed) or message (not streamed).
var openAIMessage = []field{{key: "content", kind: kText}, {key: "reasoning_content", kind: kReasoning},
	{key: "reasoning", kind: kReasoning}, {key: "role", kind: kStr, slot: oaiRole, lax: true}}

// openAIReader reads a chunk object of either OpenAI API (they differ only
// in where the text is), and the whole non-streamed response object, whose
// choices hold a message instead of a delta. Only the first choice counts
// (n > 1 is not used by a benchmark). llama.cpp's OpenAI-compatible server
// adds its timings to the last chunk.
var openAIReader = reader{
	format: stream.SSE, finishSignal: "finish_reason", interpret: interpretOpenAI,
	fields: top(
		field{key: "choices", kind: kArray, first: true, sub: in("choices[0]",
			field{key: "delta", kind: kObject, sub: in("choices[0].delta", openAIMessage...)},
			field{key: "message", kind: kObject, sub: in("choices[0].message", openAIMessage...)},
			field{key: "text", kind: kText}, field{key: "finish_reason", kind: kStr, slot: oaiFinish})},
		field{key: "usage", kind: kUsage, slot: oaiUsage, sub: in("usage", field{key: "completion_tokens", kind: kRaw, slot: oaiCompletion})},
		field{key: "object", kind: kStr, slot: oaiObject, lax: true}, field{key: "message", kind: kStr, slot: oaiMessage, lax: true},
		field{key: "timings", kind: kTimings}),
}

func interpretOpenAI(st *state, _ []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if string(c.str(oaiObject)) == "error" {
		e.isErr = true // vLLM's streamed ErrorResponse: {"object":"error","message":…}
	}
	if e.isErr {
		if len(e.errMsg) == 0 {
			e.errMsg = c.str(oaiMessage)
		}
		return nil
	}
	e.finish, e.hasFinish = c.str(oaiFinish), c.has(oaiFinish)
	e.usageChunk = c.has(oaiUsage) && c.elems == 0
	e.role = c.has(oaiRole)
	if c.rawn == 0 {
		return nil
	}
	if completion, ok := atoi(c.raw(oaiCompletion)); ok && completion >= 0 {
		// Usage that comes with a chunk still generating (no finish yet)
		// is continuous_usage_stats: cumulative, so a chunk's own tokens are
		// the difference. Usage first seen with the finish, or alone, is
		// the total of the whole response, not one chunk's.
		choices := c.elems > 0
		if choices && !(e.hasFinish && len(e.finish) > 0) {
			st.continuous = true
		}
		if st.continuous && choices {
			e.tokens = int(completion - st.prevCompletion)
		}
		st.prevCompletion = completion
	}
	return nil
}
