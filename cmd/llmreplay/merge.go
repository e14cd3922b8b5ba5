package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/trace"
)

func newTraceMergeCmd() *cobra.Command {
	var (
		out  string
		opt  trace.MergeOptions
		over bool
	)
	cmd := &cobra.Command{
		Use:   "merge SHARD.trace.zst... -o MERGED.trace.zst",
		Short: "Merge the traces of a run sent from several machines (replay --shard) into one",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("name the shard traces to merge, e.g. 'trace merge results/shard-*.trace.zst -o merged.trace.zst'")
			}
			if out == "" {
				return cli.Usagef("-o is required: the merged trace to write, e.g. -o merged.trace.zst")
			}
			var res *trace.MergeResult
			err := writeOutput(out, over, args, func(w io.Writer) (err error) {
				res, err = trace.Merge(w, args, opt)
				return cli.Usage(flagError(err))
			})
			if err == nil {
				res.WriteText(cmd.ErrOrStderr(), out)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the merged trace to write (required)")
	cmd.Flags().BoolVar(&opt.AllowMissing, "allow-missing", false, "merge the shards that are here when some are missing (the merged trace lists them)")
	cmd.Flags().BoolVar(&opt.AllowClock, "allow-clock", false, "merge shards from different hosts even when their clocks cannot be trusted to 5 ms")
	cmd.Flags().BoolVar(&over, "force", false, "replace the output file if it exists")
	return cmd
}
