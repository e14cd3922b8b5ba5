// Package endpoint knows each serving API: how to put a workload request to
// it, and how to read what it streams back into a trace record. The engine
// in package replay does the scheduling, the HTTP round trip, timeouts and
// error classes common to all APIs; an Endpoint does only what differs.
package endpoint

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Options are the per-run settings an Endpoint needs to build a request.
type Options struct {
	Model string
	// APIKey, if set, goes into the Authorization header and nowhere else.
	APIKey string
	// TokenIDs, if non-nil, is the prompt as token ids, sent instead of the
	// text where the API accepts ids (openai-completions, llamacpp).
	TokenIDs []int
	// ContinuousUsage asks for per-chunk token counts where the server
	// offers them (vLLM's stream_options.continuous_usage_stats).
	ContinuousUsage bool
	// PromptCache, where the API has a per-request switch for reusing the
	// server's cached prompt (llama.cpp cache_prompt), sends it: "on" or
	// "off"; "" sends nothing, leaving the server's default.
	PromptCache string
	// ExtraBody, when set, is a JSON object merged into every request body
	// (see MergeBody): fields a server takes beyond the API's common ones
	// (vLLM's chat_template_kwargs, top_k, Ollama's options).
	ExtraBody json.RawMessage
}

// Endpoint is one API shape.
type Endpoint interface {
	// Name is the --api value: "openai-chat", "openai-completions",
	// "llamacpp", "ollama-generate", "ollama-chat".
	Name() string
	// NewRequest builds the HTTP request for r against base (scheme, host
	// and optional path prefix, no trailing slash).
	NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error)
	// Read consumes a 2xx response body. For every event it appends a
	// trace.Chunk to rec with T = now() taken right after the read that
	// delivered the event's last byte, and it fills rec.FinishReason,
	// rec.Usage and rec.Timings from what the server sent. It returns a
	// *trace.Error when the stream is malformed, carries an error object,
	// or ends without the API's own finish signal; other errors (network)
	// are returned as they are, for the engine to classify.
	Read(body io.Reader, now func() int64, rec *trace.Record) error
}
