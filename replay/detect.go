package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/workload"
)

// APIAuto is the --api value that asks the server which API it speaks.
const APIAuto = "auto"

// --api auto: before the run, ask the server the documented identity routes
// of each serving engine once, name the engine from the answers, and pick
// the most specific API it speaks that can carry the workload's shape (a
// native API gives per-chunk counts and server timers that the OpenAI
// routes leave out). The answers are a server's words: bounded, never
// trusted beyond a field's presence and type, escaped and redacted before
// they are shown or recorded.

// probeRoutes are the identity routes asked, all at once (GET, except
// Triton's model index, which the protocol makes a POST).
var probeRoutes = []string{"/v2", "/props", "/api/version", "/info", "/get_model_info", "/version", "/v1/models"}

const (
	probeTimeout = 5 * time.Second
	probeBytes   = 64 << 10 // an identity answer is small; more is not read
)

// probe is what one route answered.
type probe struct {
	status int    // 0: no HTTP answer
	body   []byte // at most probeBytes
	err    string // why there was no answer
	cause  error  // the same, as the HTTP client returned it
}

// ok is a 200 answer whose body is a JSON object, decoded into v.
func (p probe) ok(v any) bool {
	return p.status == http.StatusOK && json.Unmarshal(p.body, v) == nil
}

// Detection is what --api auto found.
type Detection struct {
	API    string // the endpoint name chosen
	Server string // the engine named, e.g. "TGI 3.0.1"
	Why    string // one line: the evidence and the choice
}

// server kinds: which engine the answers name.
type serverKind int

const (
	kindNone serverKind = iota
	kindTriton
	kindLlamaCpp
	kindOllama
	kindTGI
	kindSGLang
	kindVLLM
	kindAnthropic
	kindOpenAI // any OpenAI-compatible server that names no engine
)

// detectAPI asks base's identity routes and picks an API for shape.
func detectAPI(ctx context.Context, c *http.Client, base, key string, shape workload.Shape, scrub func(string) string) (Detection, error) {
	probes := make(map[string]probe, len(probeRoutes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, route := range probeRoutes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := askRoute(ctx, c, base, route, key)
			mu.Lock()
			probes[route] = p
			mu.Unlock()
		}()
	}
	wg.Wait()
	d, err := chooseAPI(probes, shape)
	if err != nil {
		// Nothing answered at all: the server is not there.
		down := true
		for _, p := range probes {
			down = down && p.status == 0
		}
		if u := unreachable(ctx, base, probes["/v1/models"].cause, probeTimeout); down && u != nil {
			return d, u
		}
		if down {
			return d, fieldErr("API", fmt.Sprintf("is auto and the server at %s did not answer (%s)", RedactURL(base), scrub(probes["/v1/models"].err)), "start the server or check --url")
		}
		return d, err
	}
	d.Server = safetext.Show(scrub(d.Server))
	d.Why = safetext.Show(scrub(d.Why))
	return d, nil
}

// askRoute asks one identity route with the key in both documented places
// (a bearer token and Anthropic's x-api-key: the key goes to the one server
// it was given for either way).
func askRoute(ctx context.Context, c *http.Client, base, route, key string) probe {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint.JoinURL(base, "", route), nil)
	if err != nil {
		return probe{err: err.Error()}
	}
	endpoint.AuthHeaders("openai-chat", req.Header, key)
	endpoint.AuthHeaders("anthropic", req.Header, key)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return probe{err: cleanMessage(err), cause: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, probeBytes))
	return probe{status: resp.StatusCode, body: b}
}

// shortVersion is a short version string from a server's answer: printable,
// at most 40 bytes, or "".
func shortVersion(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 40 {
		v = v[:40]
	}
	return v
}

func named(name, v string) string {
	if v = shortVersion(v); v != "" {
		return name + " " + v
	}
	return name
}

// identify names the engine behind the answers, most specific first: an
// engine's own route outranks the OpenAI model list every engine serves.
func identify(p map[string]probe) (kind serverKind, server, evidence string) {
	var triton struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}
	if p["/v2"].ok(&triton) && (strings.Contains(strings.ToLower(triton.Name), "triton") || triton.Extensions != nil) {
		return kindTriton, named("Triton", triton.Version), "GET /v2 answered with KServe server metadata"
	}
	var props struct {
		Defaults   json.RawMessage `json:"default_generation_settings"`
		TotalSlots *int            `json:"total_slots"`
		BuildInfo  string          `json:"build_info"`
	}
	if p["/props"].ok(&props) && (props.Defaults != nil || props.TotalSlots != nil) {
		return kindLlamaCpp, named("llama.cpp", props.BuildInfo), "GET /props answered with llama-server's properties"
	}
	var ollama struct {
		Version *string `json:"version"`
	}
	if p["/api/version"].ok(&ollama) && ollama.Version != nil {
		return kindOllama, named("Ollama", *ollama.Version), "GET /api/version answered"
	}
	var tgi struct {
		ModelID        *string `json:"model_id"`
		Version        string  `json:"version"`
		MaxInput       *int    `json:"max_input_tokens"`
		MaxInputLength *int    `json:"max_input_length"`
		MaxTotal       *int    `json:"max_total_tokens"`
	}
	if p["/info"].ok(&tgi) && tgi.ModelID != nil && (tgi.MaxInput != nil || tgi.MaxInputLength != nil || tgi.MaxTotal != nil) {
		return kindTGI, named("TGI", tgi.Version), "GET /info answered with Text Generation Inference's model info"
	}
	var sgl struct {
		ModelPath *string `json:"model_path"`
	}
	if p["/get_model_info"].ok(&sgl) && sgl.ModelPath != nil {
		return kindSGLang, "SGLang", "GET /get_model_info answered"
	}
	var models struct {
		Data []struct {
			Type    string `json:"type"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	listed := p["/v1/models"].ok(&models)
	owner := ""
	if listed && len(models.Data) > 0 {
		owner = strings.ToLower(models.Data[0].OwnedBy)
	}
	if owner == "sglang" {
		return kindSGLang, "SGLang", "GET /v1/models lists a model owned by sglang"
	}
	var vllm struct {
		Version *string `json:"version"`
	}
	if p["/version"].ok(&vllm) && vllm.Version != nil {
		return kindVLLM, named("vLLM", *vllm.Version), "GET /version answered"
	}
	switch owner {
	case "vllm":
		return kindVLLM, "vLLM", "GET /v1/models lists a model owned by vllm"
	case "llamacpp":
		return kindLlamaCpp, "llama.cpp", "GET /v1/models lists a model owned by llamacpp"
	}
	// Anthropic's model list has typed entries and no owner; without the
	// right key it answers 401 with its own error shape.
	if listed && len(models.Data) > 0 && models.Data[0].Type == "model" && models.Data[0].OwnedBy == "" {
		return kindAnthropic, "an Anthropic Messages server", "GET /v1/models lists typed models"
	}
	m := p["/v1/models"]
	if m.status == http.StatusUnauthorized || m.status == http.StatusForbidden {
		if json.Unmarshal(m.body, &models) == nil && models.Type == "error" && models.Error.Type != "" {
			return kindAnthropic, "an Anthropic Messages server", fmt.Sprintf("GET /v1/models refused the key with Anthropic's error shape (HTTP %d)", m.status)
		}
	}
	if listed && len(models.Data) > 0 {
		return kindOpenAI, "an OpenAI-compatible server", "GET /v1/models lists models and no engine route answered"
	}
	return kindNone, "", ""
}

// native is each engine's own API for raw prompts and for chats ("" when
// it has none), and the route it is sent to, for the message.
var native = map[serverKind]struct{ completion, chat string }{
	kindTriton:    {"trtllm", ""},
	kindLlamaCpp:  {"llamacpp", "openai-chat"},
	kindOllama:    {"ollama-generate", "ollama-chat"},
	kindTGI:       {"tgi", "openai-chat"},
	kindSGLang:    {"sglang", "openai-chat"},
	kindVLLM:      {"openai-completions", "openai-chat"},
	kindAnthropic: {"", "anthropic"},
	kindOpenAI:    {"openai-completions", "openai-chat"},
}

// chooseAPI picks the API for shape from the probes' answers.
func chooseAPI(p map[string]probe, shape workload.Shape) (Detection, error) {
	kind, server, evidence := identify(p)
	if kind == kindNone {
		var seen []string
		for _, r := range probeRoutes {
			switch q := p[r]; {
			case q.status != 0:
				seen = append(seen, fmt.Sprintf("%s: HTTP %d", r, q.status))
			case q.err != "":
				seen = append(seen, r+": no answer")
			}
		}
		return Detection{}, fieldErr("API", "is auto and the server answered none of the identity routes as a known engine ("+strings.Join(seen, ", ")+")",
			"give --api: one of "+strings.Join(endpoint.Names, ", "))
	}
	n := native[kind]
	chat := shape != workload.ShapeCompletion
	api, what := n.completion, "raw-prompt"
	if chat {
		api, what = n.chat, "chat"
	}
	if api == "" {
		other := "a chat workload (--shape chat)"
		if chat {
			other = "a raw-prompt workload (--shape completion)"
		}
		return Detection{}, fieldErr("API", fmt.Sprintf("is auto and the server is %s (%s), which takes no %s workload", server, evidence, what),
			"build "+other+", or give --api")
	}
	return Detection{API: api, Server: server, Why: fmt.Sprintf("%s: %s; a %s workload goes to %s", server, evidence, what, api)}, nil
}
