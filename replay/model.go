package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay/endpoint"
)

// modelTimeout bounds the question of which model a server serves.
const modelTimeout = 10 * time.Second

// discoverModel asks the server which model it serves, so --model can be
// left out for the common one-model local server. llama.cpp's native API
// ignores the model name, so it needs none.
func discoverModel(ctx context.Context, c *http.Client, base, api, key string, scrub func(string) string) (string, error) {
	// Everything the server says here is scrubbed of the key and the URL's
	// query values before it is kept or shown: a model list answering
	// {"id": "model-<key>"} would put the key into the trace header.
	m, err := askModel(ctx, c, base, api, key, scrub)
	if err == nil && len(m) > safetext.MaxName {
		// It would be sent with every request and written on every row
		// of every table: a name that long is not one to take on trust.
		return "", fieldErr("Model", fmt.Sprintf("is empty and the server at %s names its model with %d bytes, more than the %d a trace takes", RedactURL(base), len(m), safetext.MaxName), "give the model name")
	}
	return scrub(m), err
}

func askModel(ctx context.Context, c *http.Client, base, api, key string, scrub func(string) string) (string, error) {
	path, isOllama := "/v1/models", false
	switch api {
	case "llamacpp":
		return "", nil
	case "ollama-generate", "ollama-chat":
		path, isOllama = "/api/tags", true
	case "trtllm":
		return tritonModel(ctx, c, base, key, scrub)
	}
	ctx, cancel := context.WithTimeout(ctx, modelTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint.JoinURL(base, "", path), nil)
	if err != nil {
		return "", err
	}
	endpoint.AuthHeaders(api, req.Header, key)
	b, err := askServer(c, req, base, path, "which model it serves", "give the model name", scrub)
	if err != nil {
		return "", err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", fieldErr("Model", fmt.Sprintf("is empty and the model list at %s%s is not JSON", RedactURL(base), path), "give the model name")
	}
	switch {
	case !isOllama && len(list.Data) > 0 && list.Data[0].ID != "":
		return list.Data[0].ID, nil
	case isOllama && len(list.Models) > 0 && list.Models[0].Name != "":
		return list.Models[0].Name, nil
	}
	return "", fieldErr("Model", fmt.Sprintf("is empty and the server at %s lists no model", RedactURL(base)), "give the model name")
}

// askServer sends req, a question to the server at base (its path) about
// what it serves, and returns the answer's first MiB; a failure or a
// status other than 200 is a Model error naming the question and fix.
func askServer(c *http.Client, req *http.Request, base, path, question, fix string, scrub func(string) string) ([]byte, error) {
	resp, err := c.Do(req)
	if u := unreachable(req.Context(), base, err, modelTimeout); u != nil {
		return nil, u
	}
	if err != nil {
		return nil, fieldErr("Model", fmt.Sprintf("is empty and asking %s%s %s failed: %s", RedactURL(base), path, question, scrub(cleanMessage(err))), "start the server, or "+fix)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fieldErr("Model", fmt.Sprintf("is empty and asking %s%s %s got HTTP %s", RedactURL(base), path, question, scrub(resp.Status)), fix)
	}
	return b, nil
}

// tritonModel picks the model of a Triton server serving TensorRT-LLM from
// its repository index (POST /v2/repository/index, KServe's model
// repository extension): the "ensemble" model that chains tokenizer,
// engine and detokenizer, else the "tensorrt_llm_bls" one, else the only
// ready model. Anything else is ambiguous and needs --model.
func tritonModel(ctx context.Context, c *http.Client, base, key string, scrub func(string) string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelTimeout)
	defer cancel()
	const path = "/v2/repository/index"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.JoinURL(base, "", path), strings.NewReader(`{"ready":true}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	endpoint.AuthHeaders("trtllm", req.Header, key)
	b, err := askServer(c, req, base, path, "which models it serves", "give the Triton model name (e.g. ensemble)", scrub)
	if err != nil {
		return "", err
	}
	var index []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(b, &index); err != nil {
		return "", fieldErr("Model", fmt.Sprintf("is empty and the model index at %s%s is not a JSON list", RedactURL(base), path), "give the Triton model name (e.g. ensemble)")
	}
	var ready []string
	for _, m := range index {
		if m.Name != "" && (m.State == "" || m.State == "READY") {
			ready = append(ready, m.Name)
		}
	}
	for _, want := range []string{"ensemble", "tensorrt_llm_bls"} {
		for _, n := range ready {
			if n == want {
				return n, nil
			}
		}
	}
	if len(ready) == 1 {
		return ready[0], nil
	}
	return "", fieldErr("Model", fmt.Sprintf("is empty and the server at %s serves %d ready models, none named ensemble or tensorrt_llm_bls", RedactURL(base), len(ready)), "give the Triton model name")
}
