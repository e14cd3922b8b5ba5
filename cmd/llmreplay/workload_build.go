package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/workload"
)

func newWorkloadBuildCmd() *cobra.Command {
	var (
		out   string
		force bool
		cfg   workload.BuildConfig
	)
	cmd := &cobra.Command{
		Use:   "build -o FILE",
		Short: "Generate a workload file of tokenizer-exact prompts and an arrival schedule",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usagef("no output file: add -o NAME.workload.zst")
			}
			if err := outfile.CheckParent(out); err != nil {
				return cli.Usage(err)
			}
			if err := outfile.Check(out, force, cfg.Inputs()...); err != nil {
				return cli.Usage(err)
			}
			if err := cfg.Stated(given(cmd, nil)); err != nil {
				return flagError(err)
			}
			wl, err := workload.Build(cfg)
			if err != nil {
				return cli.Usage(flagError(err))
			}
			if err := workload.Create(out, wl); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s\n", out, wl.Describe())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "workload file to write (conventionally NAME.workload.zst)")
	f.BoolVar(&force, "force", false, "replace the output file if it exists")
	cfg.RegisterFlags(f)
	return cmd
}
