package complete

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// TestFromCompletesTheLastElement: values are offered by prefix; in a
// comma list only the last element is completed, the ones before it kept,
// and the shell told not to add a space.
func TestFromCompletesTheLastElement(t *testing.T) {
	values := []string{"ttft_p50", "ttft_p99", "tpot_p50", "e2e_p90"}
	for _, c := range []struct {
		typed   string
		comma   bool
		want    []string
		noSpace bool
	}{
		{"", false, values, false},
		{"ttft", false, []string{"ttft_p50", "ttft_p99"}, false},
		{"x", false, nil, false},
		{"ttft_p50,tp", true, []string{"ttft_p50,tpot_p50"}, true},
		{"e2e", true, []string{"e2e_p90"}, true},
		{"a,b,", true, []string{"a,b,ttft_p50", "a,b,ttft_p99", "a,b,tpot_p50", "a,b,e2e_p90"}, true},
		{"ttft_p50,tp", false, nil, false},
	} {
		got, d := From(values, c.typed, c.comma)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q comma=%v: %q, want %q", c.typed, c.comma, got, c.want)
		}
		if d&cobra.ShellCompDirectiveNoFileComp == 0 || (d&cobra.ShellCompDirectiveNoSpace != 0) != c.noSpace {
			t.Errorf("%q comma=%v: directive %v", c.typed, c.comma, d)
		}
	}
}

// TestTokenizerNamesElseFiles: a prefix of a built-in name completes to
// it; anything else completes to tokenizer.json files.
func TestTokenizerNamesElseFiles(t *testing.T) {
	names := []string{"o200k_base", "cl100k_base"}
	for _, c := range []struct {
		typed string
		want  []string
		d     cobra.ShellCompDirective
	}{
		{"cl", []string{"cl100k_base"}, cobra.ShellCompDirectiveNoFileComp},
		{"", names, cobra.ShellCompDirectiveNoFileComp},
		{"./models/", []string{"json", "zst"}, cobra.ShellCompDirectiveFilterFileExt},
	} {
		got, d := tokenizer(names, c.typed)
		if !slices.Equal(got, c.want) || d != c.d {
			t.Errorf("%q: %q %v, want %q %v", c.typed, got, d, c.want, c.d)
		}
	}
}
