package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/llmreplay/llmreplay/replay/endpoint"
)

// discoverModel asks the server which model it serves, so --model can be
// left out for the common one-model local server. llama.cpp's native API
// ignores the model name, so it needs none.
func discoverModel(ctx context.Context, c *http.Client, base, api, key string) (string, error) {
	path, isOllama := "/v1/models", false
	switch api {
	case "llamacpp":
		return "", nil
	case "ollama-generate", "ollama-chat":
		path, isOllama = "/api/tags", true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint.JoinURL(base, "", path), nil)
	if err != nil {
		return "", err
	}
	endpoint.AuthHeaders(api, req.Header, key)
	resp, err := c.Do(req)
	if err != nil {
		return "", fieldErr("Model", fmt.Sprintf("is empty and asking %s%s which model it serves failed: %s", RedactURL(base), path, cleanMessage(err)), "start the server, or give the model name")
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fieldErr("Model", fmt.Sprintf("is empty and asking %s%s which model it serves got HTTP %s", RedactURL(base), path, resp.Status), "give the model name")
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
