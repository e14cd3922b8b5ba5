package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/probe"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

func newProbeCmd() *cobra.Command {
	return group("probe", "Short experiments with a verdict: does the server's prefix cache work", newProbePrefixCacheCmd())
}

// probeFlagOf names the flags that set probe.Settings' fields flagOf
// does not name, or names otherwise.
var probeFlagOf = map[string]string{"Mode": "--mode", "NoCache": "--no-prefix-cache", "Rounds": "--rounds", "Requests": "--round-requests",
	"UserTokens": "--input-tokens", "Salt": "--salt"}

func newProbePrefixCacheCmd() *cobra.Command {
	var (
		f     replayFlags
		s     probe.Settings
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "prefix-cache [--url URL] [flags]",
		Short: "Test the server's prefix cache: a repeated prompt must hit it, a new one miss",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Every setting is checked before the simulator starts.
			if err := s.Check(given(cmd, probeFlagOf), f.Config.URL); err != nil {
				return flagErrorIn(err, probeFlagOf)
			}
			f.Settings.Salt = "off"
			rc, err := f.config(nil, out)
			if err != nil {
				return err
			}
			if err := rc.PrepareTrace(false, force); out != "" && err != nil {
				return flagErrorIn(err, replayFlagOf)
			}
			rc.Tokenizer = s.Config.Tokenizer
			v, err := s.Run(cmd.Context(), rc, cmd.OutOrStdout(), cmd.ErrOrStderr())
			switch {
			case err != nil:
				return flagErrorIn(err, probeFlagOf)
			case v.Status == "FAIL":
				return cli.Exit(1, fmt.Errorf("%s", v.Why))
			case v.Status == "UNSURE":
				return cli.Exit(3, fmt.Errorf("%s", v.Why))
			}
			return nil
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs, c := cmd.Flags(), &s.Config
	fs.StringVar(&f.Config.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&s.Profile, "profile", bench.DefaultProfile, "simulator profile when no --url")
	fs.BoolVar(&s.NoCache, "no-prefix-cache", false, "the built-in simulator without its prefix cache (to see the probe fail)")
	fs.StringVar(&s.Mode, "mode", probe.ModeRepeat, "repeat (new, same, different, first again) or shared-system (rounds sharing a system prompt)")
	fs.IntVar(&s.Shared.SystemTokens, "system-tokens", probe.DefaultSystemTokens, "shared-system: the shared system prompt's exact length in tokens")
	fs.IntVar(&s.Shared.Rounds, "rounds", probe.DefaultRounds, "shared-system: rounds (the first is the cold one)")
	fs.IntVar(&s.Shared.Requests, "round-requests", probe.DefaultRoundRequests, "shared-system: requests per round, sent together")
	fs.IntVar(&c.InputTokens, "input-tokens", probe.DefaultInputTokens, "exact prompt length in tokens (shared-system: the user message, default 64)")
	fs.IntVar(&c.MaxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&c.Repeats, "repeats", probe.DefaultRepeats, "prompts per step (6 or more give a TTFT verdict)")
	fs.StringVar(&c.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar((*string)(&c.Shape), "shape", string(workload.ShapeChat), "chat or completion")
	fs.Int64Var(&c.Seed, "seed", 0, "seed for the prompts (0: a new one each run, so no earlier run's cache holds them)")
	fs.StringVarP(&out, "output", "o", "", "keep the probe's requests as a trace (four closed phases step1…step4, or one per round)")
	fs.BoolVar(&force, "force", false, "replace the -o trace if it exists")
	return cmd
}
