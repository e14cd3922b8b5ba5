package sim

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// FuzzRequest throws arbitrary bodies at every route: the server must
// answer each with 200 or a 4xx JSON error, never panic or hang.
func FuzzRequest(f *testing.F) {
	paths := []string{"/v1/chat/completions", "/v1/completions", "/completion", "/api/generate", "/api/chat", "/tokenize"}
	f.Add(uint8(0), `{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	f.Add(uint8(1), `{"prompt":[1,2,3],"max_tokens":2,"stream":true}`)
	f.Add(uint8(1), `{"prompt":[[1,2]],"max_tokens":2}`)
	f.Add(uint8(2), `{"prompt":"hello","n_predict":-1,"stream":true}`)
	f.Add(uint8(3), `{"prompt":"hello","options":{"num_predict":2}}`)
	f.Add(uint8(4), `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":false,"options":{"num_predict":1}}`)
	f.Add(uint8(5), `{"content":"tokenize me"}`)
	f.Add(uint8(0), `{"messages":[]}`)
	f.Add(uint8(1), `not json`)
	s, err := New(Config{Profile: mustProfile(f, "fast"), DefaultMaxTokens: 4, MaxContext: 1000})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		r, _ := http.NewRequestWithContext(context.Background(), "POST", "/", strings.NewReader(body))
		r.URL.Path = paths[int(route)%len(paths)]
		w := &statusWriter{discardWriter: discardWriter{h: http.Header{}}}
		h.ServeHTTP(w, r)
		if w.status != 0 && w.status != 200 && (w.status < 400 || w.status >= 500) {
			t.Fatalf("status %d for %q", w.status, body)
		}
	})
}

type statusWriter struct {
	discardWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code }
