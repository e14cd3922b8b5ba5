package safetext

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Hostile is a model id that spoofs a raw terminal.
const Hostile = "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r"

func TestShow(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"llama-3.1-8b", "llama-3.1-8b"},
		{"Qwen/Qwen3 — 8B 模型", "Qwen/Qwen3 — 8B 模型"},
		{Hostile, `evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r`},
		{"a\u202eb\u2028c\u009bd", `a\u202eb\u2028c\u009bd`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"tab\there", `tab\there`},
		// Text that reads as an escape is told apart from one: the
		// backslash is doubled. A lone backslash (a Windows path) is not.
		{`fake\u202e`, `fake\\u202e`},
		{"real\u202e", `real\u202e`},
		{`C:\Models\qwen`, `C:\Models\qwen`},
		{`C:\new\x`, `C:\\new\\x`},
		{`end\`, `end\`},
		{`tag\U000e0041`, `tag\\U000e0041`},
		// Format characters that draw nothing: a name that passes for
		// another (zero-width space, joiner, word joiner, BOM, soft
		// hyphen) and hidden ASCII in tag characters, above U+FFFF.
		{"gpt-4o\u200b\u200c\u200d\u2060\ufeff\u00ad", `gpt-4o\u200b\u200c\u200d\u2060\ufeff\u00ad`},
		{"m\U000E0041\U000E007F", `m\U000e0041\U000e007f`},
	} {
		got := Show(c.in)
		if got != c.want {
			t.Errorf("Show(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Errorf("Show(%q) still holds %U", c.in, r)
			}
		}
	}
}

func TestMarkdown(t *testing.T) {
	got := Markdown("a|b\n| 1 | 2 |")
	if strings.ContainsAny(strings.ReplaceAll(got, `\|`, ""), "|\n") {
		t.Errorf("Markdown left table syntax: %q", got)
	}
}

func FuzzShow(f *testing.F) {
	f.Add(Hostile)
	f.Add("plain")
	f.Add("\u202e\xff\x00")
	f.Add(`C:\\new\\u202e\\`)
	f.Fuzz(func(t *testing.T, s string) {
		got := Show(s)
		for _, r := range got {
			if unsafeRune(r) || r == '\n' || r == '\r' {
				t.Fatalf("Show(%q) = %q holds %U", s, got, r)
			}
		}
		// What a person reads names one input only: two server strings
		// never look the same.
		if back := unshow(t, got); back != s {
			t.Fatalf("Show(%q) = %q reads back as %q", s, got, back)
		}
	})
}

func TestCSV(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"llama-3.1-8b", "llama-3.1-8b"},
		{"", ""},
		{"-3.5", "-3.5"},
		{"+7", "+7"},
		{"1e-3", "1e-3"},
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"+cmd", "'+cmd"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"=\x1b[31m\u202e", `'=\x1b[31m\u202e`},
		{"\u202e=1", `\u202e=1`},
		// ParseFloat's numbers that a spreadsheet takes for formulas.
		{"-Inf", "'-Inf"},
		{"+NaN", "'+NaN"},
		{"-0x1p-2", "'-0x1p-2"},
		{"-1.5E+3", "-1.5E+3"},
	} {
		if got := CSV(c.in); got != c.want {
			t.Errorf("CSV(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestJSONWriter: what JSONWriter writes decodes to exactly what was
// encoded, and holds no character Show would escape but JSON's whitespace.
func TestJSONWriter(t *testing.T) {
	v := map[string]string{"model": Hostile + "\u202eR\u2066I\u2069\u061c\u200e\u200f\u0085\u009b\u200b\ufeff\U000E0041\xff é 模型 😀", "plain": "x"}
	var b strings.Builder
	enc := json.NewEncoder(JSONWriter(&b))
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if r != '\n' && unsafeRune(r) {
			t.Errorf("JSONWriter left %U: %q", r, b.String())
		}
	}
	// U+E0041 is beyond \u's four digits: JSON spells it as a UTF-16
	// surrogate pair. The emoji, also beyond, is not escaped.
	if !strings.Contains(b.String(), `\u202eR\u2066I\u2069\u061c\u200e\u200f\u0085\u009b\u200b\ufeff\udb40\udc41`) || !strings.Contains(b.String(), "é 模型 😀") {
		t.Errorf("JSONWriter output %q", b.String())
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	// encoding/json writes invalid UTF-8 as U+FFFD; everything else is
	// exactly as encoded.
	want := strings.Replace(v["model"], "\xff", "\ufffd", 1)
	if back["model"] != want || back["plain"] != "x" {
		t.Errorf("decoded %q, want %q", back["model"], want)
	}
}

// unshow reads Show's output back the way a person does: a backslash
// followed by x, u, U, n, r, t or a backslash is an escape, any other is
// itself.
func unshow(t *testing.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) || !strings.ContainsRune(`xuUnrt\\`, rune(s[i+1])) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				t.Fatalf("bad \\x escape in %q", s)
			}
			b.WriteByte(byte(v))
			i += 2
		case 'u', 'U':
			digits := 4
			if s[i] == 'U' {
				digits = 8
			}
			v, err := strconv.ParseUint(s[i+1:i+1+digits], 16, 32)
			if err != nil {
				t.Fatalf("bad \\%c escape in %q", s[i], s)
			}
			b.WriteRune(rune(v))
			i += digits
		}
	}
	return b.String()
}
