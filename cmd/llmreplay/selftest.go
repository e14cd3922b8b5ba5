package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/selftest"
)

func newSelftestCmd() *cobra.Command {
	var (
		cfg  selftest.Config
		outs selftest.Outputs
	)
	cmd := &cobra.Command{
		Use:   "selftest [--short]",
		Short: "Measure the client itself: CPU per token, streams held, timestamp error, schedule precision, trace size, analysis speed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Check(given(cmd, selftest.FlagOf)); err != nil {
				return flagErrorIn(err, selftest.FlagOf)
			}
			files, err := outs.Claim()
			if err != nil {
				return flagErrorIn(err, selftest.FlagOf)
			}
			defer files.Close()
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find this program's path to start the simulator child: %w", err)
			}
			cfg.Child = []string{exe, "selftest", "sim-child"}
			cfg.Progress = cmd.ErrOrStderr()
			return files.Run(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	cfg.RegisterFlags(f)
	outs.RegisterFlags(f)
	cmd.AddCommand(&cobra.Command{
		Use:                "sim-child",
		Short:              "The simulator side of selftest (started by selftest itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return selftest.ServeChild(args, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	})
	return cmd
}
