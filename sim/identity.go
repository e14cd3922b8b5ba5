package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Identities are the engines the simulator can answer identity routes as
// (Config.PoseAs), so --api auto can be tested end to end: each answers its
// engine's documented identity route with that route's documented shape,
// trimmed to the fields a client reads. Every API's generation routes are
// served whatever the identity.
var Identities = []string{"vllm", "sglang", "tgi", "llamacpp", "ollama", "triton", "anthropic"}

func validIdentity(id string) error {
	if id == "" {
		return nil
	}
	for _, v := range Identities {
		if v == id {
			return nil
		}
	}
	return fmt.Errorf("sim: identity %q is not known: use one of %s", id, strings.Join(Identities, ", "))
}

// identityRoutes adds the identity routes of cfg.PoseAs to m. With no
// identity the simulator answers only /v1/models (owned by
// "llmreplay-sim") and /api/tags, like a generic OpenAI-compatible server.
func (s *Server) identityRoutes(m *http.ServeMux) {
	j := func(v any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		}
	}
	switch s.cfg.PoseAs {
	case "vllm": // vLLM's api_server: GET /version
		m.HandleFunc("GET /version", j(map[string]string{"version": "0.11.0"}))
	case "sglang": // SGLang's native API: GET /get_model_info
		m.HandleFunc("GET /get_model_info", j(map[string]any{"model_path": s.model, "tokenizer_path": s.model, "is_generation": true}))
	case "tgi": // Text Generation Inference: GET /info (its OpenAPI "Info")
		m.HandleFunc("GET /info", j(map[string]any{"model_id": s.model, "model_dtype": "torch.bfloat16", "model_device_type": "cuda",
			"max_concurrent_requests": 128, "max_best_of": 2, "max_stop_sequences": 4, "max_input_tokens": 4095, "max_total_tokens": 4096,
			"validation_workers": 2, "max_client_batch_size": 4, "router": "text-generation-router", "version": "3.3.6"}))
	case "llamacpp": // llama-server: GET /props
		m.HandleFunc("GET /props", j(map[string]any{"default_generation_settings": map[string]any{"n_ctx": 4096}, "total_slots": 4,
			"model_path": s.model + ".gguf", "build_info": "b6000-sim"}))
	case "ollama": // Ollama: GET /api/version
		m.HandleFunc("GET /api/version", j(map[string]string{"version": "0.12.0"}))
	case "triton": // Triton (KServe v2): GET /v2 server metadata, POST /v2/repository/index
		m.HandleFunc("GET /v2", j(map[string]any{"name": "triton", "version": "2.60.0", "extensions": []string{"classification", "sequence", "model_repository", "schedule_policy", "model_configuration", "system_shared_memory", "cuda_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging", "generate"}}))
		m.HandleFunc("POST /v2/repository/index", j([]map[string]string{
			{"name": "ensemble", "version": "1", "state": "READY"},
			{"name": "postprocessing", "version": "1", "state": "READY"},
			{"name": "preprocessing", "version": "1", "state": "READY"},
			{"name": "tensorrt_llm", "version": "1", "state": "READY"},
		}))
	}
}

// modelList is GET /v1/models as the identity's engine answers it.
func (s *Server) modelList(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.cfg.PoseAs == "anthropic" {
		// Anthropic's Models API: typed entries, no owner, paging fields.
		json.NewEncoder(w).Encode(map[string]any{
			"data":     []map[string]string{{"type": "model", "id": s.model, "display_name": s.model, "created_at": "2025-01-01T00:00:00Z"}},
			"has_more": false, "first_id": s.model, "last_id": s.model,
		})
		return
	}
	owner := "llmreplay-sim"
	switch s.cfg.PoseAs {
	case "vllm", "sglang", "llamacpp":
		owner = s.cfg.PoseAs
	case "tgi":
		owner = s.model
	case "ollama":
		owner = "library"
	}
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
	}
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   []model{{ID: s.model, Object: "model", Created: time.Now().Unix(), OwnedBy: owner, MaxModelLen: s.cfg.MaxContext}},
	})
}
