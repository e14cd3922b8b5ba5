package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

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
		Long: `Merge checks that the shard traces belong to one run (the same workload,
shard count, model, label and common start, each shard index once, none
missing, each request in one shard once), puts them on one clock
(the earliest shard's start, using each shard's wall-clock start) and writes
one trace whose records are all of theirs in order of completion, each with
its shard. analyze, check and trace info then treat it as one run.

Per-request metrics (TTFT, ITL, TPOT) use one machine's clock each and are
exact. What compares times across machines (a phase's window, hence
aggregate tok/s) is as good as the clocks: merge prints the worst-case
alignment error, and refuses shards from different hosts whose clocks the OS
does not vouch for to 5 ms (--allow-clock to merge anyway).`,
		Example: `  llmreplay trace merge results/shard-*.trace.zst -o merged.trace.zst
  llmreplay analyze merged.trace.zst`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name the shard traces to merge, e.g. 'trace merge results/shard-*.trace.zst -o merged.trace.zst'")
			}
			if out == "" {
				return usagef("-o is required: the merged trace to write, e.g. -o merged.trace.zst")
			}
			var res *trace.MergeResult
			err := writeOutput(out, over, args, func(w io.Writer) error {
				var err error
				res, err = trace.Merge(w, args, opt)
				return usageError(flagError(err))
			})
			if err != nil {
				return err
			}
			w := cmd.ErrOrStderr()
			for _, s := range res.Warnings {
				fmt.Fprintln(w, "warning:", s)
			}
			fmt.Fprintf(w, "merged %d shard%s of %d (%d records) into %s\n",
				len(res.Header.Shards), plural(len(res.Header.Shards)), res.Header.Shards[0].Count, res.Records, out)
			if len(res.Header.ShardsMissing) > 0 {
				fmt.Fprintf(w, "missing shards: %v (merged without them: --allow-missing)\n", res.Header.ShardsMissing)
			}
			fmt.Fprintf(w, "clock alignment: %s\n", alignment(res))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the merged trace to write (required)")
	cmd.Flags().BoolVar(&opt.AllowMissing, "allow-missing", false, "merge the shards that are here when some are missing (the merged trace lists them)")
	cmd.Flags().BoolVar(&opt.AllowClock, "allow-clock", false, "merge shards from different hosts even when their clocks cannot be trusted to 5 ms")
	cmd.Flags().BoolVar(&over, "force", false, "replace the output file if it exists")
	return cmd
}

// alignment says how far the merged clock can be trusted, for people.
func alignment(res *trace.MergeResult) string {
	switch {
	case res.AlignUnknown:
		return "unknown (a shard's clock gave no error estimate): aggregate tok/s and phase windows across hosts may be off by the clocks' disagreement"
	case res.AlignErrorNs == 0:
		return "exact (every shard ran on one host, one clock)"
	default:
		return fmt.Sprintf("worst case ±%v between hosts (affects phase windows and aggregate tok/s, not per-request metrics)", time.Duration(res.AlignErrorNs))
	}
}

// counted is "1 phase", "3 phases": a count with its noun agreeing.
func counted(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, plural(n)) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
