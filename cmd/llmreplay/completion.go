package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/sim"
)

// flagValues are the values shell completion offers for a flag, wherever
// the flag appears; each list comes from the registry that checks the flag,
// so completion cannot offer a value the command refuses.
func flagValues() map[string]func(cmd *cobra.Command) []string {
	return map[string]func(*cobra.Command) []string{
		"api":         func(*cobra.Command) []string { return append(append([]string{}, endpoint.Names...), replay.APIAuto) },
		"identity":    func(*cobra.Command) []string { return sim.Identities },
		"profile":     func(*cobra.Command) []string { return sim.ProfileNames() },
		"definitions": func(*cobra.Command) []string { return analyze.DefinitionNames() },
		"format": func(cmd *cobra.Command) []string {
			if cmd.Name() == "check" {
				return claim.Formats
			}
			return []string{"table", "markdown", "csv", "json"}
		},
		"metrics": func(*cobra.Command) []string { return render.MetricNames() },
		"by": func(*cobra.Command) []string {
			return []string{"concurrency", "rate", "input-tokens", "phase", "label", "repeat", "turn"}
		},
	}
}

// registerCompletions walks the command tree once and attaches value
// completion to every flag named in flagValues, and to --tokenizer (the
// built-in names, else tokenizer.json files).
func registerCompletions(c *cobra.Command) {
	values := flagValues()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Name == "tokenizer":
			c.RegisterFlagCompletionFunc(f.Name, completeTokenizer)
		case values[f.Name] != nil:
			list := values[f.Name]
			comma := strings.Contains(f.Value.Type(), "Slice")
			c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeFrom(list(cmd), toComplete, comma)
			})
		}
	})
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

// completeFrom offers the values starting with toComplete; for a
// comma-separated list flag it completes the last element and keeps the
// ones before it.
func completeFrom(values []string, toComplete string, comma bool) ([]string, cobra.ShellCompDirective) {
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

func completeTokenizer(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if out, _ := completeFrom([]string{"o200k_base", "cl100k_base"}, toComplete, false); len(out) > 0 {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"json", "zst"}, cobra.ShellCompDirectiveFilterFileExt
}
