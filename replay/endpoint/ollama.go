package endpoint

import (
	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// ollamaGenerate is Ollama's /api/generate: NDJSON lines, the last with
// "done": true and the server's own counts and durations. The prompt is
// sent raw (no template), so the server sees exactly the tokens the
// workload counted; Ollama takes no token ids.
//
// Ollama has no way to ignore end-of-sequence, so a request's IgnoreEOS is
// not sent: a model that stops early stops, and the trace shows the
// shortfall (eval_count below max_tokens, done_reason "stop") as it is.
//
// The answer: text from response (generate) or message.content (chat),
// thinking text as reasoning. The finish reason is done_reason, or "done"
// if the server sent none. rec.Timings is an object of the final line's
// total_duration, load_duration, prompt_eval_count, prompt_eval_duration,
// eval_count and eval_duration (nanoseconds and tokens), each value as
// sent.
var ollamaGenerate = &adapter{name: "ollama-generate", prefix: "/api", path: "/generate", accept: ndjsonAccept, needModel: true,
	input: input{shape: rawText, instead: "a chat API", needPrompt: true}, body: ollamaRequest, reader: ollamaReader}

// ollamaChat is Ollama's /api/chat; see ollamaGenerate. A completion-shaped
// request (a prompt) is sent as one user message.
var ollamaChat = &adapter{name: "ollama-chat", prefix: "/api", path: "/chat", accept: ndjsonAccept, needModel: true,
	input: input{shape: chatOrPrompt}, body: ollamaRequest, reader: ollamaReader}

// ollamaRequest is the body of both Ollama APIs; raw sends generate's
// prompt without the model's template.
func ollamaRequest(q *call) (object, error) {
	prompt, _ := q.prompt.(string)
	return object{m("model", q.o.Model), opt("prompt", prompt), opt("messages", q.messages), opt("raw", q.prompt != nil), m("stream", true),
		m("options", object{opt("num_predict", q.r.MaxTokens), m("temperature", q.r.Temperature)})}, nil
}

// What an Ollama line's walk captures: done and done_reason, and the
// timings in raw slots 1…6.
const (
	ollDone   = 1
	ollReason = 2
)

var ollamaTimingKeys = [...]string{"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"}

var ollamaReader = reader{
	format: stream.NDJSON, finishSignal: `"done": true`, interpret: interpretOllama,
	fields: top(append(counted(ollamaTimingKeys[:]...),
		field{key: "response", kind: kText}, field{key: "thinking", kind: kReasoning},
		field{key: "message", kind: kObject, sub: in("message", field{key: "content", kind: kText}, field{key: "thinking", kind: kReasoning})},
		field{key: "done", kind: kBool, slot: ollDone}, field{key: "done_reason", kind: kStr, slot: ollReason, lax: true})...),
}

func interpretOllama(st *state, _ []byte) *trace.Error {
	e := &st.ev
	c := &st.cap
	if st.counts(&st.timings, ollamaTimingKeys[:]...) {
		st.hasTimings = true
	}
	if c.flag(ollDone) {
		e.hasFinish, e.finish = true, c.str(ollReason)
		if len(e.finish) == 0 {
			e.finish = wordDone
		}
	}
	return nil
}
