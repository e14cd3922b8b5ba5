package suggest

import (
	"reflect"
	"testing"
)

func TestNearest(t *testing.T) {
	flags := []string{"concurrency", "input-tokens", "max-tokens", "tokenizer", "timeout", "idle-timeout", "url", "output"}
	cases := []struct {
		word string
		want []string
	}{
		{"concurency", []string{"concurrency"}},    // one letter missing
		{"input_tokens", []string{"input-tokens"}}, // the JSON spelling of the flag
		{"max-token", []string{"max-tokens"}},      // a letter short
		{"tokeniser", []string{"tokenizer"}},       // British spelling
		{"conc", []string{"concurrency"}},          // a prefix
		{"timout", []string{"timeout"}},            // and not idle-timeout, farther away
		{"urll", []string{"url"}},                  // short words: one edit
		{"zzz", nil},                               // nothing near
		{"output", nil},                            // an exact match is not a suggestion
		{"", nil},
	}
	for _, c := range cases {
		if got := Nearest(c.word, flags, 1); !reflect.DeepEqual(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("Nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Phrase("tokens", []string{"input-tokens", "max-tokens"}); got != "" {
		t.Errorf("Phrase(tokens) = %q: neither is within reach", got)
	}
	if got := Phrase("max-tokns", []string{"input-tokens", "max-tokens"}); got != " (did you mean max-tokens?)" {
		t.Errorf("Phrase = %q", got)
	}
	if got := Phrase("vlm", []string{"vllm", "vllm-native", "llm"}); got != " (did you mean vllm or llm?)" {
		t.Errorf("Phrase = %q", got)
	}
}
