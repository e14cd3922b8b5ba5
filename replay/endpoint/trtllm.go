package endpoint

import (
	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// trtllm is NVIDIA Triton's generate extension in front of a TensorRT-LLM
// model (POST /v2/models/NAME/generate_stream): SSE events with the new
// text in text_output. The model name is the Triton model (e.g.
// "ensemble") and is required; text_input is a raw prompt. TensorRT-LLM's
// Triton ensemble has no ignore-EOS input; it is left out.
//
// The answer: text from text_output; no usage, timers or per-chunk counts
// (the generate extension sends none). The stream has no finish field: a
// body that ends cleanly after at least one event is the end of the
// answer, finish reason "stop". {"error": …} is a server error; an event
// without text_output (another API's stream) is malformed.
var trtllm = &adapter{name: "trtllm", path: "/v2/models/{model}/generate_stream", accept: sseAccept, needModel: true,
	input: input{shape: rawText, idsField: "text_input"},
	body: func(q *call) (object, error) {
		return object{m("text_input", q.r.Prompt), opt("max_tokens", q.r.MaxTokens), m("temperature", q.r.Temperature), m("stream", true)}, nil
	},
	reader: reader{format: stream.SSE, finishSignal: "clean end", endFinishes: true,
		fields: top(field{key: "text_output", kind: kText, slot: 1}),
		interpret: func(st *state, data []byte) *trace.Error {
			return st.need(data, "an event without text_output is not Triton's generate_stream", 1<<1)
		}}}
