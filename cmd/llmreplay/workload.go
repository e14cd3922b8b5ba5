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
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Show a workload's header, phases, input-length histogram and digest",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := openWorkload(cmd, args)
			if err != nil {
				return err
			}
			rep := workload.Summarize(args[0], wl)
			if asJSON {
				return rep.WriteJSON(cmd.OutOrStdout())
			}
			rep.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func newWorkloadCatCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cat FILE",
		Short: "Print every request as one JSON object per line, for jq",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := openWorkload(cmd, args)
			if err != nil {
				return err
			}
			return wl.WriteJSONLines(cmd.OutOrStdout())
		},
	}
}

func newWorkloadVerifyCmd() *cobra.Command {
	var tokSpec string
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Re-tokenize every prompt and report any whose token count is off",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := openWorkload(cmd, args)
			if err != nil {
				return err
			}
			return flagError(workload.VerifyText(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], wl, tokSpec))
		},
	}
	cmd.Flags().StringVar(&tokSpec, "tokenizer", "", "tokenizer to count with (default: the workload's own; a tokenizer.json by its path or model id)")
	return cmd
}

// openWorkload reads the workload the one FILE argument names (- for
// standard input); a file that is no workload is bad input.
func openWorkload(cmd *cobra.Command, args []string) (*workload.Workload, error) {
	wl, err := workload.OpenArg(args[0], cmd.InOrStdin())
	return wl, cli.Usage(err)
}
