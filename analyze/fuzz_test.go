package analyze

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/trace"
)

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft=2s,tpot=50ms", "e2e=10s", "ttft=150", "tpot=0.5ms,ttft=1m", "ttft", "x=1s", "ttft=-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		if slo.TTFT < 0 || slo.TPOT < 0 || slo.E2E < 0 || slo == (SLO{}) {
			t.Fatalf("%q parsed to %+v", s, slo)
		}
	})
}

// FuzzCountUp checks the count-up reader never reads past the text, that
// a valid prefix stays valid when the text grows, and that it agrees with
// the plain reference implementation (fast_test.go).
func FuzzCountUp(f *testing.F) {
	for _, s := range []string{"1, 2, 3", " 1\n2\n3", "1 2 3 4 5 6 7 8 9 1", "<think>", "0, 1", "1,,,,2", ""} {
		f.Add(s, "1, 2, 3, 4")
	}
	f.Fuzz(func(t *testing.T, text, ref string) {
		n := countUpValid(text, ref)
		if n < 0 || n > len(text) {
			t.Fatalf("countUpValid(%q, %q) = %d, outside the text", text, ref, n)
		}
		if want := countUpValidItoa(text, ref); n != want {
			t.Fatalf("countUpValid(%q, %q) = %d, the reference implementation %d", text, ref, n, want)
		}
		if n > 0 && countUpValid(text[:n], ref) != n && !strings.HasPrefix(ref, strings.TrimLeft(text[:n], " \t\r\n")) {
			// A valid prefix, cut where it ended, is still entirely valid.
			t.Fatalf("prefix %q of %q: %d, want %d", text[:n], text, countUpValid(text[:n], ref), n)
		}
	})
}

// FuzzServerCounts: whatever token counts a server sends (per chunk, in
// usage), analysis neither panics nor reports an infinite or negative
// figure (±9e18 per-chunk counts once overflowed a distribution's count
// and panicked in makeslice).
func FuzzServerCounts(f *testing.F) {
	f.Add(int64(9_000_000_000_000_000_000), int64(1), `{"completion_tokens":9000000000000000000}`)
	f.Add(int64(-9_000_000_000_000_000_000), int64(-9_000_000_000_000_000_000), `{"completion_tokens":-5,"prompt_tokens":-1}`)
	f.Add(int64(2), int64(3), `{"completion_tokens":5}`)
	f.Fuzz(func(t *testing.T, a, b int64, usage string) {
		a2, b2 := int(a), int(b)
		rec := trace.Record{ID: "r", Sent: 0, Headers: msNs, Status: 200, MaxTokens: 16, Usage: usage,
			Chunks: []trace.Chunk{chunk(10, "1, 2", a2), chunk(20, ", 3", b2), chunk(30, ", 4", a2)}, Done: 31 * msNs}
		an, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		acc := an.Trace("x", "", header("x", phase(0, 1, 100, 16, 1)))
		for i := 0; i < 3; i++ {
			r := rec
			r.ID = fmt.Sprint("r", i)
			acc.Add(&r)
		}
		res := an.Result()
		for _, g := range res.Groups([]string{KeyConcurrency}) {
			for m, v := range g.Values {
				if math.IsInf(v.Value, 0) || v.Value < 0 { // NaN: no value
					t.Fatalf("%s = %v from counts %d, %d, usage %q", m, v.Value, a, b, usage)
				}
			}
		}
	})
}

// FuzzErrorText: whatever body a server sends with an error, ErrorText
// never panics, stays within maxErrorText runes, is valid UTF-8 when its
// inputs are, and is never empty (the class at least).
func FuzzErrorText(f *testing.F) {
	for _, b := range []string{
		`{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size","type":"exceed_context_size_error"}}`,
		`{"object":"error","message":"maximum context length is 2048 tokens","code":400}`,
		`{"error":"model not found"}`, `{"detail":[{"loc":["body"],"msg":"bad"}]}`, `{"error":{"message":42}}`,
		"plain\nsecond line", "<html>502</html>", `{`, "", "\x1b[2J" + strings.Repeat("é", 300),
	} {
		f.Add("HTTP 400 Bad Request", b)
	}
	f.Fuzz(func(t *testing.T, msg, body string) {
		s := ErrorText(&trace.Error{Class: trace.ErrHTTPStatus, Message: msg, Body: body})
		if s == "" || utf8.RuneCountInString(s) > maxErrorText {
			t.Fatalf("ErrorText(%q, %q) = %q (%d runes)", msg, body, s, utf8.RuneCountInString(s))
		}
		if utf8.ValidString(msg) && utf8.ValidString(body) && !utf8.ValidString(s) {
			t.Fatalf("ErrorText of valid UTF-8 is not: %q", s)
		}
	})
}
