// Package complete attaches shell completion of flag values to a cobra
// command tree: a flag named in a table offers the values its function
// lists (a comma-separated list flag completes its last element), and a
// --tokenizer flag offers the built-in tokenizer names, else
// tokenizer.json files. The lists come from the caller, from the
// registries that check each flag, so completion cannot offer a value the
// command refuses. It imports no product package.
package complete

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Values are the values completion offers for a flag, by the flag's name,
// wherever it appears; the command asking is given, for a flag whose
// values differ by command.
type Values map[string]func(cmd *cobra.Command) []string

// Register walks the command tree from c once and attaches value
// completion to every flag values names, and to --tokenizer (the names
// tokenizers, else .json and .zst files).
func Register(c *cobra.Command, values Values, tokenizers []string) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Name == "tokenizer":
			c.RegisterFlagCompletionFunc(f.Name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return tokenizer(tokenizers, toComplete)
			})
		case values[f.Name] != nil:
			list := values[f.Name]
			comma := strings.Contains(f.Value.Type(), "Slice")
			c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return From(list(cmd), toComplete, comma)
			})
		}
	})
	for _, sub := range c.Commands() {
		Register(sub, values, tokenizers)
	}
}

// From offers the values starting with toComplete; for a comma-separated
// list flag (comma) it completes the last element and keeps the ones
// before it, and the shell adds no space after it.
func From(values []string, toComplete string, comma bool) ([]string, cobra.ShellCompDirective) {
	prefix, last := "", toComplete
	if comma {
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix, last = toComplete[:i+1], toComplete[i+1:]
		}
	}
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, last) {
			out = append(out, prefix+v)
		}
	}
	d := cobra.ShellCompDirectiveNoFileComp
	if comma {
		d |= cobra.ShellCompDirectiveNoSpace
	}
	return out, d
}

// tokenizer offers the names that match, else tokenizer.json files
// (.json, or .zst compressed).
func tokenizer(names []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if out, _ := From(names, toComplete, false); len(out) > 0 {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"json", "zst"}, cobra.ShellCompDirectiveFilterFileExt
}
