package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/analyze/report"
	"github.com/llmreplay/llmreplay/capacity"
)

func newReportCmd() *cobra.Command {
	var (
		tf                  traceFlags
		out                 string
		force               bool
		claims              []string
		claimsFile          string
		acceptPoint, accept bool
	)
	cmd := &cobra.Command{
		Use:   "report TRACE... [-o report.html]",
		Short: "Write one self-contained HTML page: the summary, verdicts and capacity first, then charts, timelines and every metric",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = report.DefaultPath(args[0])
			}
			cs, err := parseClaimFlags(claims, claimsFile)
			if err != nil {
				return err
			}
			// One pass over the traces: the analysis, and the records the
			// timelines draw.
			tl, srv := &report.Timelines{}, &report.ServerState{}
			tf.opts.Records, tf.opts.Scrapes = tl.Add, srv.Add
			res, views, err := tf.analyzeWithViews(cmd, args)
			if err != nil {
				return err
			}
			o := report.Options{When: time.Now().UTC().Format(time.RFC3339), Timelines: tl, Server: srv, Extra: capacity.ViewCharts(views), Answers: capacity.ViewLines(views)}
			// check's default floor (claim.MinSamples), not one of its own:
			// the page promises check's verdicts, and a floor of 6 here
			// made --accept-point refuse 3–5 runs that check judges.
			vs, _, _ := claim.CheckAll(res, cs, claim.CheckOptions{AcceptPoint: acceptPoint, AcceptPartial: accept})
			for _, v := range vs {
				verdict, measured, why := v.Cells()
				o.Claims = append(o.Claims, report.ClaimRow{Claim: v.Text, Verdict: verdict, Measured: measured, Why: why})
			}
			// The inputs as files, label=path read as path: the page
			// never replaces one of them, even with --force.
			err = writeOutput(out, force, analyze.InputPaths(args), func(w io.Writer) error {
				return report.Write(w, res, o)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", out)
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write (default report.html in the first trace's folder)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file (never an input)")
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "a claim to judge and show, as check takes it (repeatable)")
	cmd.Flags().StringVar(&claimsFile, "claims", "", "a file of claims, one per line, as check takes it")
	cmd.Flags().BoolVar(&acceptPoint, "accept-point", false, "as check: judge point estimates on their value")
	cmd.Flags().BoolVar(&accept, "accept-partial", false, "as check: judge claims over stopped or damaged traces")
	tf.capacityFlag(cmd)
	return cmd
}
