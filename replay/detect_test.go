package replay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/workload"
)

// Identity answers as each engine documents them, trimmed to what a client
// reads (fuller ones are in the simulator's identity.go):
//   - vLLM: GET /version, vllm/entrypoints/openai/api_server.py
//     ({"version": …}); /v1/models entries owned_by "vllm".
//   - SGLang: GET /get_model_info, docs "SGLang Native APIs"
//     (model_path, tokenizer_path, is_generation).
//   - TGI: GET /info, docs/openapi.json schema "Info" (model_id,
//     max_input_tokens, max_total_tokens, version, router …).
//   - llama.cpp: GET /props, tools/server/README.md
//     (default_generation_settings, total_slots, build_info).
//   - Ollama: GET /api/version, docs/api.md ({"version": "0.5.1"}).
//   - Triton: GET /v2, KServe v2 protocol "Server Metadata"
//     ({"name", "version", "extensions"}).
//   - Anthropic: GET /v1/models, "List Models" ({"data": [{"type":
//     "model", "id", "display_name", "created_at"}], "has_more" …}); 401
//     {"type": "error", "error": {"type": "authentication_error", …}}.
//   - OpenAI: GET /v1/models, "List models" ({"object": "list", "data":
//     [{"id", "object": "model", "created", "owned_by"}]}).
func TestChooseAPI(t *testing.T) {
	ok := func(body string) probe { return probe{status: 200, body: []byte(body)} }
	notFound := probe{status: 404, body: []byte(`{"detail":"Not Found"}`)}
	openaiList := ok(`{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"system"}]}`)
	with := func(extra map[string]probe) map[string]probe {
		p := map[string]probe{}
		for _, r := range probeRoutes {
			p[r] = notFound
		}
		p["/v1/models"] = openaiList
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	chat, raw := workload.ShapeChat, workload.ShapeCompletion
	for _, c := range []struct {
		name   string
		probes map[string]probe
		shape  workload.Shape
		api    string // "" when refused
		want   string // in Why, or in the error
	}{
		{"openai chat", with(nil), chat, "openai-chat", "an OpenAI-compatible server: GET /v1/models lists models and no engine route answered; a chat workload goes to openai-chat"},
		{"openai raw", with(nil), raw, "openai-completions", "a raw-prompt workload goes to openai-completions"},
		{"vllm by /version", with(map[string]probe{"/version": ok(`{"version":"0.6.3.post1"}`)}), chat, "openai-chat", "vLLM 0.6.3.post1: GET /version answered"},
		{"vllm by owner", with(map[string]probe{"/v1/models": ok(`{"object":"list","data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","root":"Qwen/Qwen3-8B","max_model_len":32768}]}`)}), raw, "openai-completions", "vLLM: GET /v1/models lists a model owned by vllm"},
		{"sglang", with(map[string]probe{"/get_model_info": ok(`{"model_path":"qwen/qwen2.5-0.5b-instruct","tokenizer_path":"qwen/qwen2.5-0.5b-instruct","is_generation":true}`)}), raw, "sglang", "SGLang: GET /get_model_info answered; a raw-prompt workload goes to sglang"},
		{"sglang also has /version", with(map[string]probe{"/version": ok(`{"version":"0.4.1"}`), "/v1/models": ok(`{"object":"list","data":[{"id":"m","owned_by":"sglang"}]}`)}), raw, "sglang", "owned by sglang"},
		{"sglang chat", with(map[string]probe{"/get_model_info": ok(`{"model_path":"m"}`)}), chat, "openai-chat", "a chat workload goes to openai-chat"},
		{"tgi", with(map[string]probe{"/info": ok(`{"model_id":"bigscience/blomm-560m","model_sha":null,"model_dtype":"torch.float16","max_concurrent_requests":128,"max_best_of":2,"max_stop_sequences":4,"max_input_tokens":1024,"max_total_tokens":2048,"validation_workers":2,"version":"3.0.1","sha":"null","docker_label":"null","router":"text-generation-router"}`)}), raw, "tgi", "TGI 3.0.1: GET /info"},
		{"tgi before v2 names", with(map[string]probe{"/info": ok(`{"model_id":"m","max_input_length":1024,"max_total_tokens":2048,"version":"1.4.0"}`)}), chat, "openai-chat", "TGI 1.4.0"},
		{"model_id alone is not TGI", with(map[string]probe{"/info": ok(`{"model_id":"m"}`)}), raw, "openai-completions", "OpenAI-compatible"},
		{"llamacpp", with(map[string]probe{"/props": ok(`{"default_generation_settings":{"n_ctx":65536},"total_slots":4,"model_alias":"q","build_info":"b8681-Debian"}`)}), raw, "llamacpp", "llama.cpp b8681-Debian: GET /props"},
		{"llamacpp chat", with(map[string]probe{"/props": ok(`{"total_slots":1}`)}), chat, "openai-chat", "llama.cpp: GET /props"},
		{"llamacpp by owner", with(map[string]probe{"/v1/models": ok(`{"object":"list","data":[{"id":"q.gguf","object":"model","owned_by":"llamacpp"}]}`)}), raw, "llamacpp", "owned by llamacpp"},
		{"ollama", with(map[string]probe{"/api/version": ok(`{"version":"0.5.1"}`)}), chat, "ollama-chat", "Ollama 0.5.1: GET /api/version answered"},
		{"ollama raw", with(map[string]probe{"/api/version": ok(`{"version":"0.5.1"}`)}), raw, "ollama-generate", "ollama-generate"},
		{"triton", with(map[string]probe{"/v2": ok(`{"name":"triton","version":"2.51.0","extensions":["classification","generate"]}`), "/v1/models": notFound}), raw, "trtllm", "Triton 2.51.0: GET /v2 answered with KServe server metadata; a raw-prompt workload goes to trtllm"},
		{"triton chat refused", with(map[string]probe{"/v2": ok(`{"name":"triton","version":"2.51.0","extensions":[]}`)}), chat, "", "API is auto and the server is Triton 2.51.0 (GET /v2 answered with KServe server metadata), which takes no chat workload: build a raw-prompt workload (--shape completion), or give --api"},
		{"anthropic list", with(map[string]probe{"/v1/models": ok(`{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`)}), chat, "anthropic", "GET /v1/models lists typed models"},
		{"anthropic 401", with(map[string]probe{"/v1/models": {status: 401, body: []byte(`{"type":"error","error":{"type":"authentication_error","message":"x-api-key header is required"}}`)}}), chat, "anthropic", "GET /v1/models refused the key with Anthropic's error shape (HTTP 401)"},
		{"anthropic raw refused", with(map[string]probe{"/v1/models": ok(`{"data":[{"type":"model","id":"c"}]}`)}), raw, "", "which takes no raw-prompt workload: build a chat workload (--shape chat), or give --api"},
		{"openai 401 is not anthropic", with(map[string]probe{"/v1/models": {status: 401, body: []byte(`{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}`)}}), chat, "", "answered none of the identity routes as a known engine (/v2: HTTP 404, /props: HTTP 404, /api/version: HTTP 404, /info: HTTP 404, /get_model_info: HTTP 404, /version: HTTP 404, /v1/models: HTTP 401): give --api: one of openai-chat"},
		{"empty list", with(map[string]probe{"/v1/models": ok(`{"object":"list","data":[]}`)}), chat, "", "answered none of the identity routes"},
		{"html everywhere", func() map[string]probe {
			p := with(nil)
			for r := range p {
				p[r] = ok("<html>login</html>")
			}
			return p
		}(), chat, "", "answered none of the identity routes"},
		{"a non-JSON /version is not vLLM", with(map[string]probe{"/version": ok(`0.6.3`)}), chat, "openai-chat", "OpenAI-compatible"},
		{"version of the wrong type", with(map[string]probe{"/api/version": ok(`{"version":7}`)}), chat, "openai-chat", "OpenAI-compatible"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := chooseAPI(c.probes, c.shape)
			if c.api == "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %+v, %v; want an error with %q", d, err, c.want)
				}
				return
			}
			if err != nil || d.API != c.api || !strings.Contains(d.Why, c.want) {
				t.Fatalf("got %+v, %v; want %s with %q", d, err, c.api, c.want)
			}
		})
	}
}

// TestDetectAPIHostile: identity answers are a server's words. A key the
// server quotes back, terminal control characters and an answer too long
// to be an identity never reach the choice's text; a body past the bound
// is not read (and so names nothing).
func TestDetectAPIHostile(t *testing.T) {
	const key = "sk-detect-0123456789abcdefghijklmn"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			w.Write([]byte(`{"version":"\u001b[2J` + key[:20] + `\n` + key + `"}`))
		case "/props":
			w.Write([]byte(`{"total_slots":1,"pad":"` + strings.Repeat("x", probeBytes) + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	e := &engine{cfg: Config{APIKey: key}}
	d, err := detectAPI(context.Background(), srv.Client(), srv.URL, key, workload.ShapeChat, e.scrub)
	if err != nil {
		t.Fatal(err)
	}
	if d.API != "ollama-chat" {
		t.Fatalf("chose %+v: the /props answer past the bound must not be read", d)
	}
	if strings.Contains(d.Why, key) || strings.Contains(d.Server, key) || strings.ContainsAny(d.Why, "\x1b\n") {
		t.Errorf("the choice's text holds the key or control characters: %q", d.Why)
	}
	if !slices.Contains(endpoint.Names, d.API) {
		t.Errorf("chose %q", d.API)
	}
}

// FuzzChooseAPI: whatever the identity routes answer, the choice is an
// API replay speaks or a one-line error, never a panic.
func FuzzChooseAPI(f *testing.F) {
	f.Add(`{"version":"0.5.1"}`, `{"object":"list","data":[{"id":"m","owned_by":"vllm"}]}`, 200, false)
	f.Add(`{"name":"triton","extensions":null}`, `{"type":"error","error":{"type":"x"}}`, 401, true)
	f.Add(`{"model_id":"m","max_total_tokens":-1}`, `{"data":[{"type":"model"}]}`, 200, false)
	f.Fuzz(func(t *testing.T, engine, models string, status int, rawShape bool) {
		p := map[string]probe{}
		for _, r := range probeRoutes {
			p[r] = probe{status: 200, body: []byte(engine)}
		}
		p["/v1/models"] = probe{status: status, body: []byte(models)}
		shape := workload.ShapeChat
		if rawShape {
			shape = workload.ShapeCompletion
		}
		d, err := chooseAPI(p, shape)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		if !slices.Contains(endpoint.Names, d.API) {
			t.Fatalf("chose %q", d.API)
		}
	})
}
