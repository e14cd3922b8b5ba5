package analyze

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/trace"
)

// maxErrorText bounds the server's own words quoted in a table or a
// warning: enough for "request (5000 tokens) exceeds the available context
// size (4096 tokens)", short enough that a hostile or verbose body cannot
// flood a terminal.
const maxErrorText = 160

// ErrorText is a failed request's error as a person reads it: the error's
// message ("HTTP 400 Bad Request") and, when the response body explains
// it, the server's own words ("request (5000 tokens) exceeds the available
// context size"), clipped to maxErrorText runes. The text is raw, as the
// server sent it: renderers escape it (internal/safetext) before showing
// it; JSON carries it as a string.
func ErrorText(e *trace.Error) string {
	if e == nil {
		return ""
	}
	msg := strings.TrimSpace(e.Message)
	if s := serverMessage(e.Body); s != "" && !strings.Contains(msg, s) {
		if msg == "" {
			msg = s
		} else {
			msg += ": " + s
		}
	}
	if msg == "" {
		msg = string(e.Class)
	}
	return clip(msg, maxErrorText)
}

// serverMessage finds the explanation in an error response body. The
// servers this tool meets put it in one of a few places: OpenAI and
// llama.cpp {"error":{"message":…}}, vLLM and SGLang {"message":…},
// Ollama and TGI {"error":"…"}, FastAPI {"detail":"…"}. Any other body
// that is plain text gives its first line; HTML (a proxy's error page)
// gives nothing.
func serverMessage(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	if body[0] == '{' {
		var v map[string]any
		if json.Unmarshal([]byte(body), &v) != nil {
			return firstLine(body)
		}
		if e, ok := v["error"].(map[string]any); ok {
			if s, ok := e["message"].(string); ok {
				return firstLine(s)
			}
		}
		for _, k := range []string{"error", "message", "detail", "error_message"} {
			if s, ok := v[k].(string); ok && strings.TrimSpace(s) != "" {
				return firstLine(s)
			}
		}
		return ""
	}
	if body[0] == '<' {
		return ""
	}
	return firstLine(body)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// Failures summarises a group's failed requests for a table cell: how
// many of how many, the most frequent error class, and that class's
// message when it dominates (more than half of the failures).
type Failures struct {
	Failed, Requests int
	// Class is the most frequent error class ("" when none failed);
	// Classes is how many distinct classes there are.
	Class   string
	Classes int
	// Message is ErrorText of the first failure of Class, when Class
	// dominates and is one where the server explains itself (HTTP
	// status, an error event); raw, to be escaped before it is shown.
	Message string
}

// All reports whether every request failed.
func (f Failures) All() bool { return f.Requests > 0 && f.Failed == f.Requests }

// Failures summarises g's failed requests.
func (g *Group) Failures() Failures {
	var f Failures
	for _, r := range g.runs {
		f.Failed += r.failed
		f.Requests += r.ok + r.failed
	}
	f.Class, f.Classes = mainClass(g.FailedByClass)
	if f.Class != "" && 2*g.FailedByClass[f.Class] > f.Failed && serverSpoke(f.Class) {
		f.Message = g.ErrorExamples[f.Class]
	}
	return f
}

// serverSpoke reports whether failures of a class carry the server's own
// words (an HTTP error body, an error event in the stream), worth quoting
// beside a table. The other classes (refused, reset, timeouts …) carry
// the client's description, which the class already names and which
// varies with ports and addresses from request to request.
func serverSpoke(class string) bool {
	return class == string(trace.ErrHTTPStatus) || class == string(trace.ErrServer)
}

// mainClass is the most frequent class of counts (ties: by name) and the
// number of classes.
func mainClass(counts map[string]int) (string, int) {
	names := make([]string, 0, len(counts))
	for c, n := range counts {
		if n > 0 {
			names = append(names, c)
		}
	}
	if len(names) == 0 {
		return "", 0
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	return names[0], len(names)
}
