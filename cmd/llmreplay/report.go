package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze/report"
)

func newReportCmd() *cobra.Command {
	var (
		tf    traceFlags
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "report TRACE... -o report.html",
		Short: "Write one self-contained HTML page: the concurrency sweep charted, TTFT, latency distributions, warnings and every table",
		Long: `report reads traces offline and writes one HTML file that needs no network
to view: inline CSS and SVG charts, no script, no web font. It opens with the
trust warnings in plain words (each linking to its evidence) and what was
measured (labels, model, server, workload digest), then charts per-stream and
aggregate tok/s against concurrency (medians with 95% intervals, one colour
per label), TTFT p50/p90/p99, the inter-token latency and TPOT distributions,
and ends with the sweep table and every metric as copyable tables.
A sweep of input lengths at one concurrency is charted against input length.`,
		Example: `  llmreplay report q4=q4.trace.zst q8=q8.trace.zst -o report.html`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("report needs -o FILE.html: where to write the page")
			}
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			err = writeOutput(out, force, args, func(w io.Writer) error {
				return report.Write(w, res, report.Options{When: time.Now().UTC().Format(time.RFC3339)})
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", out)
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file")
	return cmd
}
