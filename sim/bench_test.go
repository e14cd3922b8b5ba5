package sim

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// discardWriter is a ResponseWriter that throws the bytes away but
// supports Flush, so a benchmark sees only the server's own work.
type discardWriter struct {
	h     http.Header
	bytes int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { d.bytes += len(b); return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Flush()                      {}

// BenchmarkFastProfile measures the server side of one streamed token with
// the fast profile: what the simulator takes away from a client measured
// on the same machine.
func BenchmarkFastProfile(b *testing.B) {
	for _, api := range []struct{ name, path, body string }{
		{"openai-chat", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1024,"stream":true,"stream_options":{"include_usage":true}}`},
		{"llamacpp", "/completion", `{"prompt":"hi","n_predict":1024,"stream":true}`},
		{"ollama-generate", "/api/generate", `{"prompt":"hi","options":{"num_predict":1024}}`},
	} {
		b.Run(api.name, func(b *testing.B) {
			s, err := New(Config{Profile: mustProfile(b, "fast")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := s.Handler()
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r, _ := http.NewRequestWithContext(context.Background(), "POST", "/", strings.NewReader(api.body))
				r.URL.Path = api.path
				h.ServeHTTP(w, r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/token")
			b.ReportMetric(float64(w.bytes)/float64(b.N*1024), "bytes/token")
		})
	}
}

// BenchmarkFastProfileHTTP is the same over loopback HTTP with the test
// client: server and client together, per token.
func BenchmarkFastProfileHTTP(b *testing.B) {
	s := startServer(b, Config{Profile: mustProfile(b, "fast")})
	c := newClient()
	body := chatBody("hi", 1024, true)
	b.ResetTimer()
	for range b.N {
		if r := do(context.Background(), c, s.URL(), "/v1/chat/completions", body); r.chunks != 1024 {
			b.Fatalf("%d chunks, err %v", r.chunks, r.err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/token")
}
