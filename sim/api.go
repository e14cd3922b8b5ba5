package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// api is the wire shape of one endpoint.
type api int

const (
	apiChat api = iota
	apiCompletions
	apiLlama
	apiOllamaGenerate
	apiOllamaChat
	apiAnthropic
	apiResponses
	apiTGI
	apiSGLang
	apiTRTLLM
)

// maxOutputTokens bounds max_tokens so one request cannot make the server
// build an enormous count-up.
const maxOutputTokens = 1 << 17

// job is one parsed request.
type job struct {
	api             api
	model           string
	stream          bool
	includeUsage    bool
	continuousUsage bool
	promptIDs       []int
	maxTokens       int
	noReuse         bool // cache_prompt: false
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiChat) }))
	m.HandleFunc("POST /v1/completions", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiCompletions) }))
	m.HandleFunc("POST /completion", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiLlama) }))
	m.HandleFunc("POST /completions", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiLlama) }))
	m.HandleFunc("POST /api/generate", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiOllamaGenerate) }))
	m.HandleFunc("POST /api/chat", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiOllamaChat) }))
	m.HandleFunc("POST /v1/messages", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiAnthropic) }))
	m.HandleFunc("POST /v1/responses", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiResponses) }))
	m.HandleFunc("POST /generate_stream", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiTGI) }))
	m.HandleFunc("POST /generate", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiSGLang) }))
	m.HandleFunc("POST /v2/models/{model}/generate_stream", s.guard(func(w http.ResponseWriter, r *http.Request) { s.handle(w, r, apiTRTLLM) }))
	m.HandleFunc("GET /v1/models", s.guard(s.modelList))
	s.identityRoutes(m)
	m.HandleFunc("GET /api/tags", s.guard(s.ollamaTags))
	m.HandleFunc("POST /tokenize", s.guard(s.tokenizeHandler))
	m.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	m.Handle("GET /metrics", s.met.handler())
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apiChat, http.StatusNotFound, "not_found_error", "",
			fmt.Sprintf("the simulator has no route %s %s: use /v1/chat/completions, /v1/completions, /completion, /api/generate, /api/chat, /v1/messages, /v1/responses, /generate_stream, /generate or /v2/models/NAME/generate_stream", r.Method, r.URL.Path))
	})
	s.mux = m
}

// guard makes Close wait for the handler and refuses work once closing.
func (s *Server) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.enter() {
			writeError(w, apiChat, http.StatusServiceUnavailable, "server_error", "", "the simulator is shutting down")
			return
		}
		defer s.handlers.Done()
		h(w, r)
	}
}

// errorBody is OpenAI's error shape; llama.cpp uses the same one with a
// numeric code. Ollama's is {"error": "..."}.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, a api, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if a == apiOllamaGenerate || a == apiOllamaChat {
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	if a == apiTGI {
		json.NewEncoder(w).Encode(map[string]string{"error": msg, "error_type": typ})
		return
	}
	if a == apiAnthropic {
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": anthropicErrorType(status), "message": msg}})
		return
	}
	var e errorBody
	e.Error.Message = msg
	e.Error.Type = typ
	if code != "" {
		e.Error.Code = code
	} else {
		e.Error.Code = status
	}
	json.NewEncoder(w).Encode(e)
}

// anthropicErrorType is the error type Anthropic documents for a status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// wire is the union of the request fields the served APIs use.
type wire struct {
	Model     string          `json:"model"`
	Messages  []wireMessage   `json:"messages"`
	System    json.RawMessage `json:"system"` // Anthropic's system prompt
	Input     json.RawMessage `json:"input"`  // the Responses API's messages or string
	MaxOutput *int            `json:"max_output_tokens"`
	Inputs    json.RawMessage `json:"inputs"`     // TGI's prompt
	Text      json.RawMessage `json:"text"`       // SGLang's prompt
	TextInput json.RawMessage `json:"text_input"` // Triton's prompt
	InputIDs  json.RawMessage `json:"input_ids"`
	Sampling  *struct {
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"sampling_params"`
	Parameters *struct {
		MaxNewTokens *int `json:"max_new_tokens"`
	} `json:"parameters"`
	Prompt        json.RawMessage `json:"prompt"`
	Stream        *bool           `json:"stream"`
	MaxTokens     *int            `json:"max_tokens"`
	MaxCompletion *int            `json:"max_completion_tokens"`
	NPredict      *int            `json:"n_predict"`
	StreamOptions *struct {
		IncludeUsage    bool `json:"include_usage"`
		ContinuousUsage bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	Options *struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
	// CachePrompt is llama.cpp's switch for reusing the cached prompt
	// (llama-server's default: true).
	CachePrompt *bool `json:"cache_prompt"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parse reads a request body into a job. The prompt is counted with the
// server's tokenizer: the sum of the message contents for chat (no chat
// template, so the count matches what the workload promised), the text or
// the ids themselves for completions.
func (s *Server) parse(r *http.Request, a api) (*job, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %v", err)
	}
	var in wire
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("the request body is not valid JSON: %v", err)
	}
	j := &job{api: a, model: in.Model, noReuse: in.CachePrompt != nil && !*in.CachePrompt}
	if j.model == "" {
		j.model = s.model
	}
	// OpenAI and llama.cpp default to a single response; Ollama streams
	// unless told not to.
	j.stream = a == apiOllamaGenerate || a == apiOllamaChat
	if in.Stream != nil {
		j.stream = *in.Stream
	}
	if in.StreamOptions != nil {
		j.includeUsage = in.StreamOptions.IncludeUsage
		j.continuousUsage = in.StreamOptions.ContinuousUsage
	}
	limit := (*int)(nil)
	switch a {
	case apiAnthropic:
		limit = in.MaxTokens
		if limit == nil || *limit <= 0 {
			return nil, fmt.Errorf("max_tokens: Field required")
		}
	case apiResponses:
		limit = in.MaxOutput
	case apiTRTLLM:
		limit = in.MaxTokens
		in.Prompt = in.TextInput
		j.model = r.PathValue("model")
		j.stream = true // the generate_stream route always streams
	case apiSGLang:
		if in.Sampling != nil {
			limit = in.Sampling.MaxNewTokens
		}
		in.Prompt = in.Text
		if len(in.InputIDs) > 0 {
			in.Prompt = in.InputIDs
		}
	case apiTGI:
		if in.Parameters != nil {
			limit = in.Parameters.MaxNewTokens
		}
		in.Prompt = in.Inputs
		j.stream = true // the route streams whatever the body says
	case apiChat:
		limit = in.MaxTokens
		if in.MaxCompletion != nil {
			limit = in.MaxCompletion
		}
	case apiCompletions:
		limit = in.MaxTokens
	case apiLlama:
		limit = in.NPredict
		if limit == nil {
			limit = in.MaxTokens
		}
	case apiOllamaGenerate, apiOllamaChat:
		if in.Options != nil {
			limit = in.Options.NumPredict
		}
	}
	j.maxTokens = s.cfg.DefaultMaxTokens
	if j.maxTokens == 0 {
		j.maxTokens = 256
	}
	if limit != nil && *limit > 0 {
		j.maxTokens = *limit
	}
	if j.maxTokens > maxOutputTokens {
		return nil, fmt.Errorf("max_tokens %d is more than the simulator's %d: ask for fewer", j.maxTokens, maxOutputTokens)
	}
	if k := s.cfg.Overrun; k > 1 {
		// The fault: a server that does not stop at the length asked.
		j.maxTokens = min(j.maxTokens*k, maxOutputTokens)
	}
	if a == apiResponses {
		// input is a string (one user message) or a list of messages.
		var text string
		if err := json.Unmarshal(in.Input, &text); err == nil {
			in.Messages = []wireMessage{{Role: "user", Content: in.Input}}
		} else if err := json.Unmarshal(in.Input, &in.Messages); err != nil || len(in.Input) == 0 {
			return nil, fmt.Errorf("input must be a string or a list of messages")
		}
	}
	switch a {
	case apiChat, apiOllamaChat, apiAnthropic, apiResponses:
		if len(in.Messages) == 0 {
			return nil, fmt.Errorf("messages is empty: send at least one message")
		}
		if len(in.System) > 0 {
			text, err := messageText(in.System)
			if err != nil {
				return nil, err
			}
			j.promptIDs = append(j.promptIDs, s.tok.Encode(text)...)
		}
		for _, m := range in.Messages {
			text, err := messageText(m.Content)
			if err != nil {
				return nil, err
			}
			j.promptIDs = append(j.promptIDs, s.tok.Encode(text)...)
		}
	default:
		ids, text, err := promptOf(in.Prompt)
		if err != nil {
			return nil, err
		}
		if ids != nil {
			j.promptIDs = ids
		} else {
			j.promptIDs = s.tok.Encode(text)
		}
	}
	return j, nil
}

// messageText accepts a string or OpenAI's list of content parts.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("message content is neither a string nor a list of text parts")
	}
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out, nil
}

// promptOf accepts a string, a list of token ids, or a one-element list of
// either (OpenAI's batch form).
func promptOf(raw json.RawMessage) (ids []int, text string, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", fmt.Errorf("prompt is missing: send a string or a list of token ids")
	}
	if err := json.Unmarshal(raw, &text); err == nil {
		return nil, text, nil
	}
	if err := json.Unmarshal(raw, &ids); err == nil {
		if ids == nil {
			ids = []int{}
		}
		return ids, "", nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(raw, &batch); err == nil && len(batch) == 1 {
		return promptOf(batch[0])
	}
	return nil, "", fmt.Errorf("prompt must be a string or a list of token ids (one prompt per request)")
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, a api) {
	j, err := s.parse(r, a)
	if err != nil {
		s.met.requests.WithLabelValues("400").Inc()
		writeError(w, a, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	if s.failRandomly() {
		s.met.requests.WithLabelValues("500").Inc()
		writeError(w, a, http.StatusInternalServerError, "server_error", "", "simulated internal error (--error-rate)")
		return
	}
	if n := len(j.promptIDs); s.cfg.MaxContext > 0 && n > s.cfg.MaxContext {
		s.met.requests.WithLabelValues("400").Inc()
		writeError(w, a, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens. However, your prompt has %d tokens. Please reduce the length of the prompt.", s.cfg.MaxContext, n))
		return
	}
	s.met.requests.WithLabelValues("200").Inc()
	s.met.prompt.Add(float64(len(j.promptIDs)))
	s.seeSession(r)
	s.run(w, r, j)
}

// ollamaTags is Ollama's model list, which clients (llmreplay replay among
// them) read to learn the model name when none is given.
func (s *Server) ollamaTags(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"models": []map[string]any{{"name": s.model, "model": s.model, "modified_at": time.Now().UTC().Format(time.RFC3339)}},
	})
}

// tokenizeHandler answers llama.cpp's {"content": …} and vLLM's (and
// SGLang's) {"prompt": …} with {"tokens", "count", "max_model_len"}, and
// TGI's {"inputs": …} with TGI's list of tokens, all with the server's
// tokenizer: replay asks it to count prompts and received text in the
// model's own vocabulary.
func (s *Server) tokenizeHandler(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Content *string `json:"content"`
		Prompt  *string `json:"prompt"`
		Inputs  *string `json:"inputs"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&in); err != nil || (in.Content == nil && in.Prompt == nil && in.Inputs == nil) {
		writeError(w, apiLlama, http.StatusBadRequest, "invalid_request_error", "", `send {"content": "text"} to /tokenize`)
		return
	}
	text := ""
	switch {
	case in.Content != nil:
		text = *in.Content
	case in.Prompt != nil:
		text = *in.Prompt
	default:
		text = *in.Inputs
	}
	ids := s.tok.Encode(text)
	if ids == nil {
		ids = []int{}
	}
	w.Header().Set("Content-Type", "application/json")
	if in.Content == nil && in.Prompt == nil {
		type tgiToken struct {
			ID      int    `json:"id"`
			Text    string `json:"text"`
			Special bool   `json:"special"`
		}
		out := make([]tgiToken, len(ids))
		for i, id := range ids {
			out[i] = tgiToken{ID: id, Text: s.tok.Decode([]int{id})}
		}
		json.NewEncoder(w).Encode(out)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"tokens": ids, "count": len(ids), "max_model_len": s.cfg.MaxContext})
}

// resetConn closes the client's connection abruptly: linger 0 makes the
// kernel send RST instead of FIN, like a crashed or killed server.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func itoa(n int) string { return strconv.Itoa(n) }
