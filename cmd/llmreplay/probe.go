package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/probe"
	"github.com/llmreplay/llmreplay/replay"
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
				return flagError(err)
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
	fs := cmd.Flags()
	s.RegisterFlags(fs)
	fs.StringVar(&f.Config.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVarP(&out, "output", "o", "", "keep the probe's requests as a trace (four closed phases step1…step4, or one per round)")
	fs.BoolVar(&force, "force", false, "replace the -o trace if it exists")
	return cmd
}
