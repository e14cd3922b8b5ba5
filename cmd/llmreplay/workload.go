package main

import (
	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/workload"
)

func newWorkloadCmd() *cobra.Command {
	return group("workload", "Build, inspect and verify tokenizer-exact workload files",
		newWorkloadBuildCmd(), newWorkloadInspectCmd(), newWorkloadCatCmd(), newWorkloadVerifyCmd())
}

func newWorkloadInspectCmd() *cobra.Command {
	var asJSON bool
	cmd := onWorkload("inspect FILE", "Show a workload's header, phases, input-length histogram and digest", func(cmd *cobra.Command, file string, wl *workload.Workload) error {
		rep := workload.Summarize(file, wl)
		if asJSON {
			return rep.WriteJSON(cmd.OutOrStdout())
		}
		rep.WriteText(cmd.OutOrStdout())
		return nil
	})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newWorkloadCatCmd() *cobra.Command {
	return onWorkload("cat FILE", "Print every request as one JSON object per line, for jq", func(cmd *cobra.Command, _ string, wl *workload.Workload) error {
		return wl.WriteJSONLines(cmd.OutOrStdout())
	})
}

func newWorkloadVerifyCmd() *cobra.Command {
	var tokSpec string
	cmd := onWorkload("verify FILE", "Re-tokenize every prompt and report any whose token count is off", func(cmd *cobra.Command, file string, wl *workload.Workload) error {
		return flagError(workload.VerifyText(cmd.OutOrStdout(), cmd.ErrOrStderr(), file, wl, tokSpec))
	})
	cmd.Flags().StringVar(&tokSpec, "tokenizer", "", "tokenizer to count with (default: the workload's own; a tokenizer.json by its path or model id)")
	return cmd
}

// onWorkload is a command on one workload: it reads the workload its one
// FILE argument names (- for standard input; a file that is no workload is
// bad input), then does the command's work on it.
func onWorkload(use, short string, do func(cmd *cobra.Command, file string, wl *workload.Workload) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := workload.OpenArg(args[0], cmd.InOrStdin())
			if err != nil {
				return cli.Usage(err)
			}
			return do(cmd, args[0], wl)
		},
	}
}
