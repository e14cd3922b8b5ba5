package main

import (
	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/complete"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// flagValues are the values shell completion offers for a flag, wherever
// the flag appears; each list comes from the registry that checks the flag,
// so completion cannot offer a value the command refuses.
func flagValues() complete.Values {
	return complete.Values{
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

// registerCompletions attaches value completion to every flag named in
// flagValues, and to --tokenizer (the built-in names, else tokenizer.json
// files), across the command tree.
func registerCompletions(c *cobra.Command) {
	complete.Register(c, flagValues(), tokenize.TiktokenNames)
}
