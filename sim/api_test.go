package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

func fastCfg() Config {
	p, _ := LookupProfile("fast")
	return Config{Profile: p}
}

// TestAPIsStream checks every API's streamed answer: the exact count-up of
// max_tokens tokens, one token per chunk, the API's end marker and honest
// usage.
func TestAPIsStream(t *testing.T) {
	t.Parallel()
	for _, prof := range []string{"fast", "vllm-rtx5090-bf16"} {
		p, _ := LookupProfile(prof)
		s := startServer(t, Config{Profile: p})
		c := newClient()
		const n = 20
		prompt := "Count from one upwards, please."
		promptTokens := 7 // checked below against the tokenizer
		if got := s.tok.Count(prompt); got != promptTokens {
			t.Fatalf("prompt has %d tokens, test assumes %d", got, promptTokens)
		}
		want := countUpText(t, n)
		if !strings.HasPrefix(want, "1, 2, 3") {
			t.Fatalf("count-up starts %q", want)
		}
		tests := []struct {
			name, path string
			body       map[string]any
			check      func(t *testing.T, r *result)
		}{
			{"openai-chat", "/v1/chat/completions", map[string]any{
				"model": "m", "messages": []map[string]any{{"role": "user", "content": prompt}}, "max_tokens": n, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
				func(t *testing.T, r *result) {
					var first struct {
						Choices []struct {
							Delta map[string]any
						}
					}
					json.Unmarshal(r.events[0].data, &first)
					if first.Choices[0].Delta["role"] != "assistant" || first.Choices[0].Delta["content"] != "" {
						t.Errorf("first chunk %s, want a role-only delta", r.events[0].data)
					}
					checkOpenAITail(t, r, promptTokens, n)
				}},
			{"openai-completions-ids", "/v1/completions", map[string]any{
				"model": "m", "prompt": []int{1, 2, 3, 4, 5}, "max_tokens": n, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
				func(t *testing.T, r *result) { checkOpenAITail(t, r, 5, n) }},
			{"openai-completions-text", "/v1/completions", map[string]any{
				"model": "m", "prompt": prompt, "max_tokens": n, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
				func(t *testing.T, r *result) { checkOpenAITail(t, r, promptTokens, n) }},
			{"llamacpp", "/completion", map[string]any{"prompt": prompt, "n_predict": n, "stream": true, "ignore_eos": true},
				func(t *testing.T, r *result) {
					var last struct {
						Stop            bool
						TokensPredicted int `json:"tokens_predicted"`
						Timings         llamaTiming
					}
					json.Unmarshal(r.events[len(r.events)-1].data, &last)
					if !last.Stop || last.Timings.PredictedN != n || last.Timings.PromptN+last.Timings.CacheN != promptTokens || last.TokensPredicted != n {
						t.Errorf("final event %s", r.events[len(r.events)-1].data)
					}
					if last.Timings.PredictedMS <= 0 || last.Timings.PredictedPerSecond <= 0 {
						t.Errorf("timings not filled: %+v", last.Timings)
					}
				}},
			{"ollama-generate", "/api/generate", map[string]any{"model": "m", "prompt": prompt, "options": map[string]any{"num_predict": n}},
				func(t *testing.T, r *result) { checkOllamaTail(t, r, promptTokens, n) }},
			{"ollama-chat", "/api/chat", map[string]any{"model": "m", "messages": []map[string]any{{"role": "user", "content": prompt}},
				"options": map[string]any{"num_predict": n}},
				func(t *testing.T, r *result) { checkOllamaTail(t, r, promptTokens, n) }},
		}
		for _, tc := range tests {
			t.Run(prof+"/"+tc.name, func(t *testing.T) {
				r := do(context.Background(), c, s.URL(), tc.path, tc.body)
				if r.err != nil || r.status != 200 {
					t.Fatalf("status %d err %v body %s", r.status, r.err, r.body)
				}
				if r.text != want {
					t.Errorf("text %q, want %q", r.text, want)
				}
				if r.chunks != n {
					t.Errorf("%d token chunks, want %d (one token per chunk)", r.chunks, n)
				}
				if !r.done {
					t.Error("no end marker")
				}
				tc.check(t, r)
			})
		}
	}
}

func checkOpenAITail(t *testing.T, r *result, prompt, n int) {
	t.Helper()
	var last, usage struct {
		Choices []struct {
			FinishReason *string `json:"finish_reason"`
		}
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		}
	}
	json.Unmarshal(r.events[len(r.events)-2].data, &last)
	json.Unmarshal(r.events[len(r.events)-1].data, &usage)
	if len(last.Choices) != 1 || last.Choices[0].FinishReason == nil || *last.Choices[0].FinishReason != "length" {
		t.Errorf("last token chunk %s, want finish_reason length", r.events[len(r.events)-2].data)
	}
	if usage.Usage == nil || usage.Usage.Prompt != prompt || usage.Usage.Completion != n || usage.Usage.Total != prompt+n || len(usage.Choices) != 0 {
		t.Errorf("usage chunk %s, want prompt %d completion %d", r.events[len(r.events)-1].data, prompt, n)
	}
}

func checkOllamaTail(t *testing.T, r *result, prompt, n int) {
	t.Helper()
	var last struct {
		Done               bool
		DoneReason         string `json:"done_reason"`
		EvalCount          int    `json:"eval_count"`
		EvalDuration       int64  `json:"eval_duration"`
		PromptEvalCount    int    `json:"prompt_eval_count"`
		PromptEvalDuration *int64 `json:"prompt_eval_duration"`
	}
	json.Unmarshal(r.events[len(r.events)-1].data, &last)
	if !last.Done || last.DoneReason != "length" || last.EvalCount != n || last.PromptEvalCount != prompt || last.EvalDuration <= 0 || last.PromptEvalDuration == nil {
		t.Errorf("done line %s", r.events[len(r.events)-1].data)
	}
}

// TestAPIsNoStream checks the single JSON body of stream:false requests.
func TestAPIsNoStream(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	c := newClient()
	const n = 12
	want := countUpText(t, n)
	msgs := []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "hello there"}}}}
	tests := []struct {
		name, path string
		body       map[string]any
		text       func(m map[string]any) string
	}{
		{"chat", "/v1/chat/completions", map[string]any{"messages": msgs, "max_tokens": n},
			func(m map[string]any) string {
				return m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
			}},
		{"completions", "/v1/completions", map[string]any{"prompt": "hello there", "max_tokens": n},
			func(m map[string]any) string { return m["choices"].([]any)[0].(map[string]any)["text"].(string) }},
		{"llamacpp", "/completion", map[string]any{"prompt": "hello there", "n_predict": n},
			func(m map[string]any) string { return m["content"].(string) }},
		{"ollama-generate", "/api/generate", map[string]any{"prompt": "hello there", "stream": false, "options": map[string]any{"num_predict": n}},
			func(m map[string]any) string { return m["response"].(string) }},
		{"ollama-chat", "/api/chat", map[string]any{"messages": msgs, "stream": false, "options": map[string]any{"num_predict": n}},
			func(m map[string]any) string { return m["message"].(map[string]any)["content"].(string) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(context.Background(), c, s.URL(), tc.path, tc.body)
			if r.status != 200 {
				t.Fatalf("status %d body %s", r.status, r.body)
			}
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if got := tc.text(m); got != want {
				t.Errorf("text %q, want %q", got, want)
			}
			if u, ok := m["usage"].(map[string]any); ok && (u["completion_tokens"].(float64) != n || u["prompt_tokens"].(float64) != 2) {
				t.Errorf("usage %v", u)
			}
		})
	}
}

func TestModelsTokenizeMetrics(t *testing.T) {
	t.Parallel()
	s := startServer(t, Config{Profile: mustProfile(t, "llamacpp-rtx5090-q4km"), Model: "qwen"})
	c := newClient()
	resp, err := c.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string }
	}
	json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != "qwen" {
		t.Errorf("models %+v", models)
	}
	r := do(context.Background(), c, s.URL(), "/tokenize", map[string]any{"content": "hello world"})
	var tk struct{ Tokens []int }
	json.Unmarshal(r.body, &tk)
	if want := s.tok.Encode("hello world"); len(tk.Tokens) != len(want) || tk.Tokens[0] != want[0] {
		t.Errorf("tokenize %s, want %v", r.body, want)
	}
	// One request so the counters move.
	do(context.Background(), c, s.URL(), "/completion", map[string]any{"prompt": "hello world", "n_predict": 5, "stream": true})
	resp, err = c.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	testutil.Contains(t, "/metrics", text,
		"llmreplay_sim_num_requests_running{",
		"llmreplay_sim_num_requests_waiting{",
		"llmreplay_sim_kv_cache_usage_perc{",
		`llmreplay_sim_generation_tokens_total{profile="llamacpp-rtx5090-q4km"} 5`,
		`llmreplay_sim_prompt_tokens_total{profile="llamacpp-rtx5090-q4km"} 2`,
		"llmreplay_sim_prefix_cache_hits_total{",
		"# TYPE llmreplay_sim_generation_tokens_total counter",
	)
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	c := newClient()
	tests := []struct {
		name, path string
		body       any
		status     int
	}{
		{"no messages", "/v1/chat/completions", map[string]any{"max_tokens": 3}, 400},
		{"no prompt", "/v1/completions", map[string]any{"max_tokens": 3}, 400},
		{"bad prompt", "/completion", map[string]any{"prompt": map[string]any{"x": 1}}, 400},
		{"huge max_tokens", "/v1/completions", map[string]any{"prompt": "x", "max_tokens": 1 << 30}, 400},
		{"not json", "/v1/completions", "just a string", 400},
		{"unknown route", "/v2/whatever", map[string]any{}, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(context.Background(), c, s.URL(), tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d (body %s)", r.status, tc.status, r.body)
			}
			var e errorBody
			if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("error body %s is not OpenAI-shaped", r.body)
			}
		})
	}
}

func mustProfile(t testing.TB, name string) Profile {
	t.Helper()
	p, err := LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFastManyStreams holds a thousand concurrent streams on the fast
// profile: the server must not be what limits a client's concurrency test.
func TestFastManyStreams(t *testing.T) {
	t.Parallel()
	s := startServer(t, fastCfg())
	c := newClient()
	defer c.CloseIdleConnections()
	const streams, n = 1000, 20
	errs := make(chan error, streams)
	release := make(chan struct{})
	for i := 0; i < streams; i++ {
		go func() {
			<-release
			r := do(context.Background(), c, s.URL(), "/v1/completions", map[string]any{"prompt": "x", "max_tokens": n, "stream": true})
			if r.err == nil && (r.chunks != n || !r.done) {
				r.err = fmt.Errorf("%d chunks, done %v", r.chunks, r.done)
			}
			errs <- r.err
		}()
	}
	close(release)
	for i := 0; i < streams; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
