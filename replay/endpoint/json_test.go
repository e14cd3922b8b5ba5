package endpoint

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// validates runs the scanner over a whole document.
func validates(b []byte) (bool, string) {
	var s jscan
	s.reset(b)
	s.skip()
	s.end()
	return s.err == "", s.err
}

// hasRawControl reports a byte below 0x20 inside a string: the scanner
// keeps such bytes where encoding/json refuses them.
func hasRawControl(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			i++
		case c < 0x20 && in:
			return true
		}
	}
	return false
}

var jsonSeeds = []string{
	`{}`, `[]`, `{"a":[1,-2.5e+3,true,false,null,"x\"y\\z\/\b\f\n\r\t"]}`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d x"`, `"\ud83d\u0041"`, `"\u00e9\u4e2d"`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `-`, `1.`, `1e`, `.5`, `tru`, `nul`, `"abc`, `"\x"`, `"\u12"`,
	`{"choices":[{"delta":{"content":"hi"}}]}`, ` [ { } , [ ] ] `, `{"a":1}{"b":2}`, `"a` + "\t" + `b"`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000), `null`, ` null `,
}

func TestJSONAgainstEncodingJSON(t *testing.T) {
	for _, in := range jsonSeeds {
		checkJSON(t, []byte(in))
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkJSON(t, in)
	})
}

// checkJSON holds the scanner to encoding/json: same verdict on validity
// (but for the raw control bytes it keeps on purpose) and, for a string, the
// same decoded text.
func checkJSON(t *testing.T, in []byte) {
	t.Helper()
	ok, why := validates(in)
	valid := json.Valid(in)
	if valid && !ok {
		t.Fatalf("%q: scanner refused valid JSON: %s", in, why)
	}
	if ok && !valid && !hasRawControl(in) {
		t.Fatalf("%q: scanner accepted invalid JSON", in)
	}
	if !valid || !utf8.Valid(in) {
		return
	}
	var want string
	if json.Unmarshal(in, &want) != nil {
		return // not a string
	}
	var s jscan
	s.reset(in)
	var buf []byte
	got, null, sok := s.str(&buf)
	if null {
		// encoding/json decodes null into a string by leaving it
		// unchanged, without an error; the scanner says it was null.
		if !sok || string(bytes.TrimSpace(in)) != "null" {
			t.Fatalf("%q: decoded as null (ok %v)", in, sok)
		}
		return
	}
	if !sok || string(got) != want {
		t.Fatalf("%q: decoded %q (ok %v), encoding/json %q", in, got, sok, want)
	}
}

// TestTextRoundTrip encodes text with encoding/json inside a real chunk and
// checks the adapter gets it back byte for byte, escapes and all.
func TestTextRoundTrip(t *testing.T) {
	for _, text := range []string{"plain", `q"uo\te`, "nl\n\ttab", "\x00nul", "é中😀", "\u2028\u2029", "<&>", "\x1f", "\ufffd"} {
		checkRoundTrip(t, text)
	}
}

func FuzzTextRoundTrip(f *testing.F) {
	f.Add("hello", true)
	f.Add("\"\\\n\x00😀", false)
	f.Fuzz(func(t *testing.T, text string, escapeHTML bool) {
		if !utf8.ValidString(text) {
			return // encoding/json would not send these bytes as they are
		}
		checkRoundTrip(t, text)
	})
}

func checkRoundTrip(t *testing.T, text string) {
	t.Helper()
	chunk := map[string]any{
		"id": "x", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text, "reasoning_content": text + "r"}, "finish_reason": nil}},
	}
	for _, escHTML := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escHTML)
		if err := enc.Encode(chunk); err != nil {
			t.Fatal(err)
		}
		st := getState()
		err := openAIChat.parse(st, b.Bytes())
		if err != nil {
			t.Fatalf("%q: %v", b.Bytes(), err)
		}
		if string(st.ev.text) != text || string(st.ev.reasoning) != text+"r" {
			t.Fatalf("%q: text %q reasoning %q, want %q", b.Bytes(), st.ev.text, st.ev.reasoning, text)
		}
		putState(st)
	}
}

func TestAtoi(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-12", -12, true}, {"1733140000123456789", 1733140000123456789, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775808", -1 << 63, true}, {"1.5", 0, false}, {"1e3", 0, false}, {"", 0, false},
	}
	for _, tt := range tests {
		got, ok := atoi([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("atoi(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestStringEnd checks the word-at-a-time scan against a byte loop for every
// position of a quote or backslash in strings up to past the long-string cut.
func TestStringEnd(t *testing.T) {
	naive := func(b []byte, j int) int {
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		return j
	}
	for n := 0; n < 150; n++ {
		for pos := -1; pos < n; pos++ {
			for _, c := range []byte{'"', '\\', '"' ^ 0x80, '\\' + 1} {
				b := bytes.Repeat([]byte{'a'}, n)
				if pos >= 0 {
					b[pos] = c
					if pos+1 < n {
						b[pos+1] = '"' // a later stop must not win
					}
				}
				for start := 0; start < min(n, 3); start++ {
					if got, want := stringEnd(b, start), naive(b, start); got != want {
						t.Fatalf("stringEnd(%q, %d) = %d, want %d", b, start, got, want)
					}
				}
			}
		}
	}
}
