package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/workload"
)

const (
	sseAccept    = "text/event-stream"
	ndjsonAccept = "application/x-ndjson"
)

// joinURL appends an API path to base. A base that already ends in the
// API's version prefix (as OpenAI clients' base URLs do: http://host/v1) is
// not given it twice.
// A query string stays at the end (Azure-style ?api-version=…): the route
// goes into the path, not after the "?".
func joinURL(base, prefix, path string) string {
	return JoinURL(base, prefix, path)
}

// JoinURL is joinURL for callers outside the package (model discovery).
func JoinURL(base, prefix, path string) string {
	base, query, hasQuery := strings.Cut(base, "?")
	base = strings.TrimRight(base, "/")
	if !strings.HasSuffix(base, prefix) {
		base += prefix
	}
	if hasQuery {
		return base + path + "?" + query
	}
	return base + path
}

// newJSONRequest builds a POST with body b encoded as JSON, with
// Options.ExtraBody merged in (MergeBody). The API key goes into the
// Authorization header only, and only when there is one.
func newJSONRequest(ctx context.Context, url string, b any, o Options, accept string) (*http.Request, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts go as written, not with <>& escaped
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encoding the request body: %v", err)
	}
	body := buf.Bytes()
	if len(o.ExtraBody) > 0 {
		var err error
		if body, err = MergeBody(body, o.ExtraBody); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		// The URL carries no key, so the error can be shown as it is.
		return nil, fielderr.New("replay: Config", "URL", fmt.Sprintf("makes no request (%v)", err), "check the address")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "llmreplay/"+version.Tool)
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	return req, nil
}

func errNoModel(api string) error {
	return fielderr.New("replay: Config", "Model", fmt.Sprintf("is needed by %s", api), "give the model name")
}

// chatOnly refuses, at start, a request a chat-only API cannot carry: a
// raw prompt or token ids. instead names the API to use for it.
func chatOnly(api string, r *workload.Request, o Options, instead string) error {
	if len(r.Messages) == 0 || o.TokenIDs != nil {
		return fmt.Errorf("%s has no raw-prompt mode but request %s is a completion (prompt or token ids): build the workload with the chat shape, or use %s", api, r.ID, instead)
	}
	return nil
}

// rawPrompt is what a raw-prompt API (completions, llama.cpp) sends as its
// prompt: the token ids when the run sends ids, else the text. A chat
// request has no raw prompt.
func rawPrompt(api string, r *workload.Request, o Options) (any, error) {
	switch {
	case o.TokenIDs != nil:
		return o.TokenIDs, nil
	case len(r.Messages) > 0:
		return nil, errChatShape(api, r)
	}
	return r.Prompt, nil
}

func errChatShape(api string, r *workload.Request) error {
	return fmt.Errorf("%s sends a raw prompt but request %s is a chat (messages): build the workload with the completion shape, or use a chat API", api, r.ID)
}

func errNoPrompt(api string, r *workload.Request) error {
	return fmt.Errorf("%s sends a raw prompt but request %s has none", api, r.ID)
}
