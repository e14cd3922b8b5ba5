package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/probe"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

func newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "probe",
		Short:   "Short experiments with a verdict: does the server's prefix cache work",
		Long:    helpText("probe"),
		Example: helpText("probe.example"),
		Args:    cobra.ArbitraryArgs,
		RunE:    needsSubcommand,
	}
	cmd.AddCommand(newProbePrefixCacheCmd())
	return cmd
}

// probeFlagOf names the flags that set probe.Settings' fields flagOf
// does not name, or names otherwise.
var probeFlagOf = map[string]string{"Mode": "--mode", "NoCache": "--no-prefix-cache", "Rounds": "--rounds", "Requests": "--round-requests",
	"UserTokens": "--input-tokens", "Salt": "--salt"}

func newProbePrefixCacheCmd() *cobra.Command {
	var (
		f replayFlags
		s probe.Settings
	)
	cmd := &cobra.Command{
		Use:     "prefix-cache [--url URL] [flags]",
		Short:   "Test the server's prefix cache: a repeated prompt must hit it, a new one miss",
		Long:    helpText("probe-prefix-cache"),
		Example: helpText("probe-prefix-cache.example"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Every setting is checked before the simulator starts.
			if err := s.Check(given(cmd, probeFlagOf), f.cfg.URL); err != nil {
				return flagErrorIn(err, probeFlagOf)
			}
			f.s.Salt = "off"
			rc, err := f.config(nil, "")
			if err != nil {
				return err
			}
			rc.Tokenizer = s.Config.Tokenizer
			v, err := s.Run(cmd.Context(), rc, cmd.OutOrStdout(), cmd.ErrOrStderr())
			switch {
			case err != nil:
				return flagErrorIn(err, probeFlagOf)
			case v.Status == "FAIL":
				return &exitError{code: 1, err: fmt.Errorf("%s", v.Why)}
			case v.Status == "UNSURE":
				return &exitError{code: 3, err: fmt.Errorf("%s", v.Why)}
			}
			return nil
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs, c := cmd.Flags(), &s.Config
	fs.StringVar(&f.cfg.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&s.Profile, "profile", bench.DefaultProfile, "simulator profile when no --url")
	fs.BoolVar(&s.NoCache, "no-prefix-cache", false, "the built-in simulator without its prefix cache (to see the probe fail)")
	fs.StringVar(&s.Mode, "mode", probe.ModeRepeat, "repeat (new, same, different, first again) or shared-system (rounds sharing a system prompt)")
	fs.IntVar(&s.Shared.SystemTokens, "system-tokens", probe.DefaultSystemTokens, "shared-system: the shared system prompt's exact length in tokens")
	fs.IntVar(&s.Shared.Rounds, "rounds", probe.DefaultRounds, "shared-system: rounds (the first is the cold one)")
	fs.IntVar(&s.Shared.Requests, "round-requests", probe.DefaultRoundRequests, "shared-system: requests per round, sent together")
	fs.IntVar(&c.InputTokens, "input-tokens", probe.DefaultInputTokens, "exact prompt length in tokens (shared-system: the user message, default 64)")
	fs.IntVar(&c.MaxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&c.Repeats, "repeats", probe.DefaultRepeats, "prompts per step (6 or more give a TTFT verdict)")
	fs.StringVar(&c.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base or a tokenizer.json path")
	fs.StringVar((*string)(&c.Shape), "shape", string(workload.ShapeChat), "chat or completion")
	fs.Int64Var(&c.Seed, "seed", 1, "seed for the prompts")
	return cmd
}
