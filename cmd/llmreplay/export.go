package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/export"
)

func newExportCmd() *cobra.Command {
	var (
		format string
		dir    string
		force  bool
	)
	cmd := &cobra.Command{
		Use:   "export TRACE... --format parquet|csv -o DIR",
		Short: "Write traces as tables (requests, chunks, runs) in Parquet or CSV for DuckDB, pandas, spreadsheets",
		Long: `export streams traces into one file per table in DIR:

  requests  one row per request: label, phase, concurrency, input/output tokens,
            scheduled/sent/headers/first/last/done times (int64 ns since the run
            start) plus sent_at (UTC timestamp), status, error class, finish
            reason, chunks, bytes, ttft_ms, e2e_ms, per_stream_tps
  chunks    one row per streamed chunk: request id, t_ns and t, bytes, tokens
  runs      one row per run with the analysis's per-run metrics

Label a trace with name=path. docs/EXPORT.md shows the DuckDB and pandas
queries that rebuild the sweep table from the Parquet files.`,
		Example: `  llmreplay export q4=q4.trace.zst q8=q8.trace.zst --format parquet -o tables/
  duckdb -c "SELECT label, concurrency, median(per_stream_tps) FROM 'tables/requests.parquet' WHERE ok GROUP BY ALL ORDER BY ALL"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "parquet" && format != "csv" {
				return usagef("unknown --format %q: use parquet or csv", format)
			}
			if dir == "" {
				return usagef("export needs -o DIR: the folder for the table files")
			}
			if err := checkFolder("-o", dir); err != nil {
				return err
			}
			inputs := make([]analyze.Input, len(args))
			for i, a := range args {
				inputs[i] = analyze.ParseInput(a)
				if inputs[i].Path == "-" {
					return usagef("export reads trace files, not stdin: save the trace first")
				}
			}
			c, err := export.Export(export.Options{Dir: dir, Format: format, Force: force}, inputs...)
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d requests, %d chunks, %d runs", c.Requests, c.Chunks, c.Runs)
			if c.Metrics > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", %d server metric rows", c.Metrics)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, f := range c.Files {
				fmt.Fprintln(cmd.OutOrStdout(), f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "parquet", "parquet or csv")
	cmd.Flags().StringVarP(&dir, "output", "o", "", "folder for requests, chunks and runs files")
	cmd.Flags().BoolVar(&force, "force", false, "replace existing table files")
	return cmd
}
