package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/trace/inspect"
)

func newTraceCmd() *cobra.Command {
	return group("trace", "Inspect trace files: header and counts, or every record as JSON", newTraceInfoCmd(), newTraceCatCmd(), newTraceMergeCmd())
}

func needTraces(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("name a trace file, e.g. 'run.trace.zst' (or - for standard input)")
	}
	return nil
}

func newTraceInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "info TRACE...",
		Short:   "Print a trace's header and counts of records, failures, chunks and text",
		Example: "  llmreplay trace info run.trace.zst",
		Args:    needTraces,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.Usage(inspect.WriteInfo(cmd.OutOrStdout(), cmd.InOrStdin(), args))
		},
	}
}

func newTraceCatCmd() *cobra.Command {
	var o inspect.CatOptions
	cmd := &cobra.Command{
		Use:   "cat TRACE...",
		Short: "Print every record as one JSON object per line, for jq; --requests prints each request's metrics",
		Args:  needTraces,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := map[string]string{"Requests": "--requests", "NoChunks": "--no-chunks", "Scrapes": "--server-metrics"}
			if err := o.Check(given(cmd, names)); err != nil {
				return flagErrorIn(err, names)
			}
			if _, err := analyze.LookupDefinitions(o.Definitions); err != nil {
				return flagError(cli.Usage(err))
			}
			o.Rows = analyze.RequestRows(o.Definitions)
			err := inspect.Cat(cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.InOrStdin(), args, o)
			if we := (*inspect.WriteError)(nil); errors.As(err, &we) {
				return err
			}
			return cli.Usage(err)
		},
	}
	cmd.Flags().BoolVar(&o.NoChunks, "no-chunks", false, "leave out the chunks (print chunk_count instead)")
	cmd.Flags().BoolVar(&o.Scrapes, "server-metrics", false, "print the scrapes of the server's /metrics (and of a watched process) the run took, one JSON object per line (t_ns, duration_ns, source, target, error, samples), instead of the records; the client's own clock readings are summed up by trace info")
	cmd.Flags().BoolVar(&o.Requests, "requests", false, "print each request's metrics (TTFT, E2E, tokens, per-stream tok/s, error) instead of its record")
	cmd.Flags().StringVar(&o.Definitions, "definitions", analyze.DefaultDefinitions,
		"with --requests: compute per-stream tok/s and TPOT the way a tool does: "+strings.Join(analyze.DefinitionNames(), "|"))
	return cmd
}
