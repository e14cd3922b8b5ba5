package safetext

import (
	"strings"
	"testing"
)

// Hostile is the model id of issue #11 finding 10.
const Hostile = "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r"

func TestShow(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"llama-3.1-8b", "llama-3.1-8b"},
		{"Qwen/Qwen3 — 8B 模型", "Qwen/Qwen3 — 8B 模型"},
		{Hostile, `evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r`},
		{"a\u202eb\u2028c\u009bd", `a\u202eb\u2028c\u009bd`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"tab\there", `tab\there`},
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
	f.Fuzz(func(t *testing.T, s string) {
		got := Show(s)
		for _, r := range got {
			if unsafeRune(r) || r == '\n' || r == '\r' {
				t.Fatalf("Show(%q) = %q holds %U", s, got, r)
			}
		}
	})
}
