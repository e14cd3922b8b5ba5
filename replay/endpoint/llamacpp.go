package endpoint

import (
	"context"
	"io"
	"net/http"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// LlamaCpp is llama.cpp's native completion API (POST /completion): SSE
// without [DONE], ended by an event with "stop": true that also carries the
// server's own timings.
type LlamaCpp struct{}

var _ Endpoint = LlamaCpp{}

// Name implements Endpoint.
func (LlamaCpp) Name() string { return "llamacpp" }

type llamaCppBody struct {
	Model       string  `json:"model,omitempty"` // ignored by llama-server, used by routers in front of it
	Prompt      any     `json:"prompt"`
	NPredict    int     `json:"n_predict,omitempty"`
	Temperature float64 `json:"temperature"`
	IgnoreEOS   bool    `json:"ignore_eos,omitempty"`
	// CachePrompt is sent only when Options.PromptCache says so: replay
	// turns it off when prompts are salted (belt and braces: the salt
	// already makes them differ) and leaves the server's default (on)
	// otherwise, so cache studies (--salt off, --prefix shared) reach
	// llama.cpp's prompt cache.
	CachePrompt *bool `json:"cache_prompt,omitempty"`
	Stream      bool  `json:"stream"`
	// ReturnTokens makes each event list its token ids, which gives a true
	// per-chunk token count when an event carries several tokens (or none,
	// while a multi-byte character is incomplete).
	ReturnTokens bool `json:"return_tokens,omitempty"`
}

// NewRequest implements Endpoint. Options.TokenIDs, when set, replace the
// prompt text.
func (e LlamaCpp) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	b := llamaCppBody{
		Model:        o.Model,
		NPredict:     r.MaxTokens,
		Temperature:  r.Temperature,
		IgnoreEOS:    r.IgnoreEOS,
		Stream:       true,
		ReturnTokens: o.ContinuousUsage,
	}
	switch o.PromptCache {
	case "on", "off":
		v := o.PromptCache == "on"
		b.CachePrompt = &v
	}
	prompt, err := rawPrompt(e.Name(), r, o)
	if err != nil {
		return nil, err
	}
	b.Prompt = prompt
	return newJSONRequest(ctx, joinURL(base, "", "/completion"), b, o, sseAccept)
}

var llamaCppAPI = api{
	format:       stream.SSE,
	finishSignal: `"stop": true`,
	parse:        parseLlamaCpp,
}

// Read implements Endpoint. The finish reason is llama.cpp's stop_type
// mapped to the OpenAI words ("limit" → "length", "eos" and "word" →
// "stop"; another value is kept as it is; "stop" if the server gave none).
// rec.Timings is the final `timings` object as sent; rec.Usage holds the
// final event's own counts (tokens_predicted, tokens_evaluated,
// tokens_cached, truncated), each value as sent.
func (LlamaCpp) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&llamaCppAPI, body, now, rec)
}

var llamaUsageKeys = [...]string{"tokens_predicted", "tokens_evaluated", "tokens_cached", "truncated"}

func parseLlamaCpp(st *state, data []byte) *trace.Error {
	if err := st.top(data); err != nil {
		return err
	}
	s, e := &st.js, &st.ev
	var (
		stop, eos, limit, word bool
		stopType               []byte
		counts                 [len(llamaUsageKeys)][]byte
		haveCounts             bool
	)
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch key := string(k); key {
		case "content":
			if err := st.text(&e.text, &st.tbuf, data, "content"); err != nil {
				return err
			}
		case "stop":
			v, ok := s.boolean()
			if !ok {
				if s.err != "" {
					return st.syntaxError(data)
				}
				return st.shapeError(data, "stop is not a boolean")
			}
			stop = v
		case "stop_type":
			if v, null, ok := s.str(&st.sbuf); ok {
				if !null {
					stopType = v
				}
				continue
			}
			s.skip()
		case "stopped_eos", "stopped_limit", "stopped_word": // before stop_type existed
			v, ok := s.boolean()
			if !ok {
				s.skip()
			}
			switch key {
			case "stopped_eos":
				eos = v
			case "stopped_limit":
				limit = v
			default:
				word = v
			}
		case "timings":
			if s.null() {
				continue
			}
			raw := s.raw()
			if s.err == "" {
				st.timings = append(st.timings[:0], raw...)
				st.hasTimings = true
			}
		case "tokens_predicted", "tokens_evaluated", "tokens_cached", "truncated":
			raw := s.raw()
			for i, uk := range llamaUsageKeys {
				if uk == key {
					counts[i], haveCounts = raw, true
				}
			}
		case "tokens":
			if !s.enter('[') {
				s.skip()
				continue
			}
			m := 0
			for ; s.elem(m); m++ {
				s.skip()
			}
			e.tokens = m
		default:
			if !st.sharedField(k) {
				s.skip()
			}
		}
	}
	if err := st.done(data); err != nil {
		return err
	}
	if haveCounts {
		st.usage = appendObject(st.usage[:0], llamaUsageKeys[:], counts[:])
		st.hasUsage = true
	}
	if stop {
		e.hasFinish = true
		switch {
		case string(stopType) == "limit" || stopType == nil && limit:
			e.finish = []byte("length")
		case string(stopType) == "eos" || string(stopType) == "word" || stopType == nil && (eos || word):
			e.finish = []byte("stop")
		case stopType != nil:
			e.finish = stopType
		default:
			e.finish = []byte("stop")
		}
	}
	return nil
}

// appendObject appends a JSON object of the keys whose raw values are set.
func appendObject(b []byte, keys []string, vals [][]byte) []byte {
	b = append(b, '{')
	first := true
	for i, v := range vals {
		if v == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, keys[i]...)
		b = append(b, '"', ':')
		b = append(b, v...)
	}
	return append(b, '}')
}
