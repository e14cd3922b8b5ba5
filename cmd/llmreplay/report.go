package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

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
		capSLO              string
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
the server's own running and waiting requests and KV-cache usage over the
run when the trace holds scrapes of its /metrics (replay --server-metrics),
then a timeline of one run per label and load level (one row per request:
scheduled, sent, first and last token, a mark per chunk, failures in red with
their error class), and ends with the sweep table and every metric as
copyable tables. A sweep of input lengths at one concurrency is charted
against input length, open-loop phases against their request rate.
--claim and --claims judge claims as check does and show the verdicts first.

A capacity trace (made by 'llmreplay capacity') is charted first as its
search: each SLO term at every probed level with its 99% interval, the
bound as a line and the answer marked, then aggregate throughput against
load with the knee marked. The answer is decided again from the probes
(as 'capacity --from' does) for the trace's SLO or --capacity-slo.`,
		Example: `  llmreplay report q4=q4.trace.zst q8=q8.trace.zst -o report.html

  # with the verdicts of a published table's claims at the top
  llmreplay report vllm.trace.zst --claims traces/claims/vllm-rtx5090-bf16.claims -o report.html

  # a capacity search's curve, judged for another SLO than it ran with
  llmreplay report cap.trace.zst --capacity-slo 'ttft_p90<=500ms' -o capacity.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("report needs -o FILE.html: where to write the page")
			}
			cs, err := parseClaimFlags(claims, claimsFile)
			if err != nil {
				return err
			}
			// One pass over the traces: the analysis, and the records the
			// timelines draw.
			tl, srv := &report.Timelines{}, &report.ServerState{}
			tf.records, tf.scrapes = tl.Add, srv.Add
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			views, err := tf.capacityViews(cmd, args, capSLO)
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
			err = writeOutput(out, force, args, func(w io.Writer) error {
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
	cmd.Flags().StringVarP(&out, "output", "o", "", "HTML file to write")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file")
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "a claim to judge and show, as check takes it (repeatable)")
	cmd.Flags().StringVar(&claimsFile, "claims", "", "a file of claims, one per line, as check takes it")
	cmd.Flags().BoolVar(&acceptPoint, "accept-point", false, "as check: judge point estimates on their value")
	cmd.Flags().BoolVar(&accept, "accept-partial", false, "as check: judge claims over stopped or damaged traces")
	capacityFlag(cmd, &capSLO)
	return cmd
}
