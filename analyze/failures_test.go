package analyze

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/trace"
)

// ErrorText finds the server's own explanation where each kind of server
// puts it, and bounds it.
func TestErrorText(t *testing.T) {
	long := strings.Repeat("x", 500)
	cases := []struct {
		name string
		e    trace.Error
		want string
	}{
		{"llama.cpp", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request",
			Body: `{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size","type":"exceed_context_size_error"}}`},
			"HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size"},
		{"vllm", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request",
			Body: `{"object":"error","message":"This model's maximum context length is 2048 tokens.","type":"BadRequestError","code":400}`},
			"HTTP 400 Bad Request: This model's maximum context length is 2048 tokens."},
		{"ollama", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 404 Not Found", Body: `{"error":"model \"x\" not found, try pulling it first"}`},
			`HTTP 404 Not Found: model "x" not found, try pulling it first`},
		{"fastapi", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 422 Unprocessable Entity", Body: `{"detail":"bad field"}`},
			"HTTP 422 Unprocessable Entity: bad field"},
		{"plain text, first line", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 500 Internal Server Error", Body: "boom\nat line 3\n"},
			"HTTP 500 Internal Server Error: boom"},
		{"html page", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 502 Bad Gateway", Body: "<html><body>502</body></html>"},
			"HTTP 502 Bad Gateway"},
		{"json without a message", trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: `{"code":400}`},
			"HTTP 400 Bad Request"},
		{"message already says it", trace.Error{Class: trace.ErrServer, Message: "server error: out of memory", Body: "out of memory"},
			"server error: out of memory"},
		{"no message", trace.Error{Class: trace.ErrReset}, "reset"},
	}
	for _, c := range cases {
		if got := ErrorText(&c.e); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	got := ErrorText(&trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: long})
	if n := utf8.RuneCountInString(got); n != maxErrorText || !strings.HasSuffix(got, "…") {
		t.Errorf("an overlong body gives %d runes (want %d, ending in …): %q", n, maxErrorText, got)
	}
}

// Failures and the clustered-errors evidence carry the server's message
// when one class is most of the failures.
func TestFailuresCarryServerMessage(t *testing.T) {
	ph := func(i, in int) trace.Phase {
		return trace.Phase{Index: i, Name: phaseName(i), Kind: "burst", Concurrency: 1, InputTokens: in, MaxTokens: 4, Requests: 2}
	}
	h := header("A", ph(0, 1000), ph(1, 5000))
	body := `{"error":{"message":"request (5000 tokens) exceeds the available context size"}}`
	fail := func(id string) trace.Record {
		return trace.Record{ID: id, Phase: 1, InputTokens: 5000, MaxTokens: 4, Sent: 300 * msNs, Scheduled: 300 * msNs, Done: 301 * msNs, Status: 400,
			Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: body}}
	}
	ok := func(id string, at float64) trace.Record {
		return trace.Record{ID: id, Phase: 0, InputTokens: 1000, MaxTokens: 4, Sent: int64(at) * msNs, Scheduled: int64(at) * msNs, Done: int64(at+40) * msNs, Status: 200,
			Chunks: []trace.Chunk{chunk(at+10, "1", 1), chunk(at+20, ",", 1), chunk(at+30, " 2", 2)}}
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{ok("a", 0), ok("b", 100), fail("c"), fail("d")}})
	want := "HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size"
	g := findGroup(t, res.Groups([]string{KeyInputTokens}), map[string]any{KeyInputTokens: 5000})
	f := g.Failures()
	if f.Failed != 2 || f.Requests != 2 || !f.All() || f.Class != "http-status" || f.Message != want {
		t.Errorf("failures of input 5000 = %+v", f)
	}
	if g.ErrorExamples["http-status"] != want {
		t.Errorf("error_examples = %v", g.ErrorExamples)
	}
	w := hasWarning(res.Warnings, WarnErrorsClustered)
	if w == nil {
		t.Fatalf("no errors_clustered: %+v", res.Warnings)
	}
	rows := w.Evidence["by_value"].([]map[string]any)
	if rows[1]["message"] != want || rows[0]["message"] != nil {
		t.Errorf("by_value rows = %v", rows)
	}
}

// Connection failures carry the client's words (which vary with ports),
// not the server's: no message is quoted for them, the class says it.
func TestFailuresQuoteOnlyTheServer(t *testing.T) {
	h := header("A", trace.Phase{Index: 0, Name: "p0", Kind: "burst", Concurrency: 1, InputTokens: 10, MaxTokens: 4, Requests: 1})
	rec := trace.Record{ID: "a", Phase: 0, InputTokens: 10, MaxTokens: 4, Sent: 1, Done: 2,
		Error: &trace.Error{Class: trace.ErrReset, Message: "read tcp 127.0.0.1:51234->127.0.0.1:8080: connection reset by peer"}}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{rec}})
	g := res.Groups(nil)[0]
	if f := g.Failures(); f.Class != "reset" || f.Message != "" || !f.All() {
		t.Errorf("failures %+v: want class reset, no message", f)
	}
	if g.ErrorExamples["reset"] == "" {
		t.Error("the JSON's error_examples still keeps the reset's message")
	}
}
