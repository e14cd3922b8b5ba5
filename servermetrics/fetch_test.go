package servermetrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestScrapeEndpoints serves each recorded body, and each kind of bad
// answer, from an httptest server: good ones become samples, bad ones a
// failed scrape whose reason says what happened, never an error or a
// panic.
func TestScrapeEndpoints(t *testing.T) {
	vllm := readFixture(t, "vllm.metrics")
	om := readFixture(t, "vllm.openmetrics")
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/vllm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(vllm)
	})
	mux.HandleFunc("/om", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		w.Write(om)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!doctype html><title>Sign in</title>"))
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for i := 0; i < MaxBody/1024+16; i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# HELP a b\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/login", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var clock int64
	now := func() int64 { clock += 1000; return clock }
	for _, tc := range []struct {
		path, wantErr string
		samples       int
	}{
		{"/vllm", "", 16},
		{"/om", "", 12},
		{"/html", "HTML page", 0},
		{"/huge", "over the 4 MiB limit", 0},
		{"/slow", "within 200ms", 0},
		{"/redirect", "HTTP 302", 0},
		{"/missing", "HTTP 404", 0},
	} {
		t.Run(tc.path, func(t *testing.T) {
			// Only /slow is about the timeout; the others get seconds, since
			// reading 4 MiB within 200 ms failed at load 10 on 2 cores.
			timeout := 10 * time.Second
			if tc.path == "/slow" {
				timeout = 200 * time.Millisecond
			}
			s := Scraper{Client: NewClient(false), URL: srv.URL + tc.path, Target: srv.URL + tc.path, Timeout: timeout}
			sc := s.Scrape(context.Background(), now)
			if tc.wantErr == "" && sc.Error != "" || !strings.Contains(sc.Error, tc.wantErr) {
				t.Fatalf("error %q, want %q", sc.Error, tc.wantErr)
			}
			if len(sc.Samples) != tc.samples || sc.Source != trace.SourceMetrics || sc.Duration <= 0 {
				t.Errorf("%d samples, source %q, duration %d", len(sc.Samples), sc.Source, sc.Duration)
			}
		})
	}
	// Nothing listening.
	s := Scraper{Client: NewClient(false), URL: "http://127.0.0.1:1/metrics", Timeout: time.Second}
	if sc := s.Scrape(context.Background(), now); sc.Error == "" {
		t.Error("a scrape of a closed port succeeded")
	}
}

func TestTarget(t *testing.T) {
	got := Target("http://user:hunter2@host:9/metrics?token=s3cret#x")
	if strings.Contains(got, "hunter2") || strings.Contains(got, "s3cret") || strings.Contains(got, "user") {
		t.Errorf("Target kept a secret: %s", got)
	}
}
