package endpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TRTLLM is NVIDIA Triton's generate extension in front of a TensorRT-LLM
// model (POST /v2/models/NAME/generate_stream): SSE events with the new
// text in text_output. The stream has no finish field: a body that ends
// cleanly after at least one event is the end of the answer.
type TRTLLM struct{}

var _ Endpoint = TRTLLM{}

// Name implements Endpoint.
func (TRTLLM) Name() string { return "trtllm" }

type trtllmBody struct {
	TextInput   string  `json:"text_input"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	Temperature float64 `json:"temperature"`
	Stream      bool    `json:"stream"`
}

// NewRequest implements Endpoint. The model name is the Triton model
// (e.g. "ensemble") and is required; text_input is a raw prompt, so a chat
// workload and token ids are refused at start. TensorRT-LLM's Triton
// ensemble has no ignore-EOS input; it is left out.
func (e TRTLLM) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if o.Model == "" {
		return nil, errNoModel(e.Name())
	}
	if o.TokenIDs != nil {
		return nil, fmt.Errorf("trtllm takes text_input, not token ids: leave out --send-token-ids")
	}
	if len(r.Messages) > 0 {
		return nil, fmt.Errorf("trtllm sends a raw prompt but request %s is a chat (messages): build the workload with the completion shape", r.ID)
	}
	b := trtllmBody{TextInput: r.Prompt, MaxTokens: r.MaxTokens, Temperature: r.Temperature, Stream: true}
	return newJSONRequest(ctx, joinURL(base, "", "/v2/models/"+url.PathEscape(o.Model)+"/generate_stream"), b, o, sseAccept)
}

var trtllmAPI = api{
	format:       stream.SSE,
	finishSignal: "clean end",
	parse:        parseTRTLLM,
	endFinishes:  true,
}

// Read implements Endpoint: text from text_output; no usage, timers or
// per-chunk counts (the generate extension sends none); the finish reason
// is "stop" when the body ends cleanly after an event, since the API has
// no finish field. {"error": …} is a server error; an event without
// text_output (another API's stream) is malformed.
func (TRTLLM) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&trtllmAPI, body, now, rec)
}

func parseTRTLLM(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	saw := false
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "text_output":
			saw = true
			if err := st.text(&e.text, &st.tbuf, data, "text_output"); err != nil {
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
	if !saw && !e.isErr {
		return st.shapeError(data, "an event without text_output is not Triton's generate_stream")
	}
	return nil
}
