package main

import (
	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/export"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/outfile"
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
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "parquet" && format != "csv" {
				return cli.Usagef("unknown --format %q: use parquet or csv", format)
			}
			if dir == "" {
				return cli.Usagef("export needs -o DIR: the folder for the table files")
			}
			if err := outfile.CheckFolder("-o", dir); err != nil {
				return cli.Usage(err)
			}
			inputs := make([]analyze.Input, len(args))
			for i, a := range args {
				inputs[i] = analyze.ParseInput(a)
				if inputs[i].Path == "-" {
					return cli.Usagef("export reads trace files, not stdin: save the trace first")
				}
			}
			c, err := export.Export(export.Options{Dir: dir, Format: format, Force: force}, inputs...)
			if err != nil {
				return cli.Usage(err)
			}
			c.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "parquet", "parquet or csv")
	cmd.Flags().StringVarP(&dir, "output", "o", "", "folder for requests, chunks and runs files")
	cmd.Flags().BoolVar(&force, "force", false, "replace existing table files")
	return cmd
}
