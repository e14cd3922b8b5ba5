package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/analyze/report"
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
		Use:   "report TRACE... [-o report.html]",
		Short: "Write one self-contained HTML page: the summary, verdicts and capacity first, then charts, timelines and every metric",
		Long: `report reads traces offline and writes one HTML file that needs no network
to view: inline CSS and SVG charts, no script, no web font. It is written to
report.html in the first trace's folder unless -o names another file; an
existing file (or an input) is never replaced without --force.

The page leads with its answers: what is wrong with the input, a capacity
trace's answer, the verdicts of --claim/--claims (judged as check does), the
summary analyze prints (a card per label and load level: per-stream and
aggregate tok/s with 95% intervals, TTFT, TPOT, ITL and E2E at
p50/p90/p95/p99, failures, warnings, the change against the first label) and
the trust warnings in plain words, each linking to its evidence. Then the
charts: per-stream and aggregate tok/s against concurrency (medians with 95%
intervals), TTFT p50/p90/p99, the inter-token latency and TPOT
distributions, the server's own running and waiting requests and KV-cache
usage over the run when the trace holds scrapes of its /metrics (replay
--server-metrics); one colour per label on every chart, percentiles as line
styles, axes from zero on 1-2-5 ticks, logarithmic where the values span
more than two decades (inter-token gaps, input lengths). Then a timeline of
one run per label and load level (one row per request: scheduled, sent,
first and last token, a mark per chunk, failures in red with their error
class), what was measured (labels, model, server, workload digest), the
sweep table and, per label, every metric with its interval as
"value [lo, hi]". A sweep of input lengths at one concurrency is charted
against input length, open-loop phases against their request rate.

A capacity trace (made by 'llmreplay capacity') is charted first as its
search: each SLO term at every probed level with its 99% interval, the
bound as a line and the answer marked, then aggregate throughput against
load with the knee marked. The answer is decided again from the probes
(as 'capacity --from' does) for the trace's SLO or --capacity-slo.`,
		Example: `  # writes results/report.html
  llmreplay report q4=results/q4.trace.zst q8=results/q8.trace.zst

  # with the verdicts of a published table's claims at the top
  llmreplay report vllm.trace.zst --claims traces/claims/vllm-rtx5090-bf16.claims -o report.html

  # a capacity search's curve, judged for another SLO than it ran with
  llmreplay report cap.trace.zst --capacity-slo 'ttft_p90<=500ms' -o capacity.html`,
		Args: cobra.MinimumNArgs(1),
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
			tf.records, tf.scrapes = tl.Add, srv.Add
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			views, err := capacityViews(cmd.ErrOrStderr(), args, capSLO, goodputOverride(cmd, tf.slo))
			if err != nil {
				return err
			}
			o := report.Options{When: time.Now().UTC().Format(time.RFC3339), Timelines: tl, Server: srv, Extra: viewCharts(views), Answers: capacityAnswers(views)}
			// check's default floor (claim.MinSamples), not one of its own:
			// the page promises check's verdicts, and a floor of 6 here
			// made --accept-point refuse 3–5 runs that check judges.
			for _, c := range cs {
				o.Claims = append(o.Claims, claimRow(claim.Check(res, c, claim.CheckOptions{AcceptPoint: acceptPoint, AcceptPartial: accept})))
			}
			// The inputs as files, label=path read as path: the page
			// never replaces one of them, even with --force.
			inputs := make([]string, len(args))
			for i, a := range args {
				inputs[i] = analyze.ParseInput(a).Path
			}
			err = writeOutput(out, force, inputs, func(w io.Writer) error {
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
	capacityFlag(cmd, &capSLO)
	return cmd
}

// claimRow is a verdict in the words check prints.
func claimRow(v claim.Verdict) report.ClaimRow {
	var b strings.Builder
	claim.RenderVerdicts(&b, []claim.Verdict{v})
	line := strings.TrimSpace(b.String())
	measured, why := "", v.Reason
	if _, rest, ok := strings.Cut(line, " — measured "); ok {
		measured = rest
		if i := strings.Index(rest, " ("); i >= 0 {
			measured = rest[:i]
		}
	}
	if len(v.Warnings) > 0 {
		why += "; warnings: " + strings.Join(v.Warnings, ", ")
	}
	return report.ClaimRow{Claim: v.Text, Verdict: strings.ToUpper(v.Verdict), Measured: measured, Why: why}
}
