package jsontext

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestSpaceEnd: where white space ends.
func TestSpaceEnd(t *testing.T) {
	for in, want := range map[string]int{"": 0, " \t\r\n{": 4, "x ": 0, "   ": 3} {
		if got := SpaceEnd([]byte(in), 0); got != want {
			t.Errorf("SpaceEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestNumberEnd: where a number ends, and where a malformed one stops
// being one (the scanners report that byte).
func TestNumberEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		end  int
		isOK bool
	}{
		{"0", 1, true}, {"-12.5e+3,", 8, true}, {"1E9}", 3, true}, {"01", 1, true},
		{"-", 1, false}, {"x", 0, false}, {"1.", 2, false}, {"1.e3", 2, false}, {"2e", 2, false}, {"2e+", 3, false},
	} {
		if end, ok := NumberEnd([]byte(c.in), 0); end != c.end || ok != c.isOK {
			t.Errorf("NumberEnd(%q) = %d, %v; want %d, %v", c.in, end, ok, c.end, c.isOK)
		}
	}
}

// FuzzUnescape holds Unescape to encoding/json on every UTF-8 string body
// whose escapes are well formed: the same text, surrogate pairs and lone
// halves included.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud800x`, `\udc00\ud800`, `\ud800\u0041`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !utf8.ValidString(body) {
			return // raw bytes pass through as they came; encoding/json replaces them
		}
		var want string
		if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil {
			return // not a string body: the scanners refuse it before decoding
		}
		if got := string(Unescape(nil, []byte(body))); got != want {
			t.Fatalf("Unescape(%q) = %q, encoding/json %q", body, got, want)
		}
	})
}
