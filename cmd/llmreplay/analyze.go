package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/trace"
)

// Exit statuses of `check`: 0 when every claim holds, exitClaimFails when
// at least one does not hold, exitInconclusive when none fails but at
// least one cannot be decided; bad input is 2 like everywhere else.
const (
	exitClaimFails   = 1
	exitInconclusive = 3
)

// traceFlags are the flags analyze and check share.
type traceFlags struct {
	definitions string
	slo         string
	tokenizer   string
	// records, when set, sees every record as the traces are analysed
	// (report's timelines).
	records func(label string, h *trace.Header, rec *trace.Record)
	scrapes func(label string, sc *trace.Scrape)
}

func (f *traceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.definitions, "definitions", analyze.DefaultDefinitions,
		"compute metrics the way a tool does: "+strings.Join(analyze.DefinitionNames(), "|"))
	cmd.Flags().StringVar(&f.slo, "slo", analyze.DefaultSLO.String(), "goodput bounds: ttft=, tpot=, e2e= durations")
	cmd.Flags().StringVar(&f.tokenizer, "tokenizer", "", "count received text with this tokenizer instead of the trace's (o200k_base, cl100k_base or a tokenizer.json path)")
}

// analyzeInputs reads every TRACE argument (name=path, path or - for
// stdin) into one analysis. Every failure here is about the input: exit 2.
func (f *traceFlags) analyzeInputs(cmd *cobra.Command, args []string) (*analyze.Result, error) {
	slo, err := analyze.ParseSLO(f.slo)
	if err != nil {
		return nil, goodputBoundsError("--slo", err)
	}
	inputs := make([]analyze.Input, len(args))
	for i, arg := range args {
		inputs[i] = analyze.ParseInput(arg)
		inputs[i].Stdin = cmd.InOrStdin()
	}
	res, err := analyze.AnalyzeFiles(analyze.Options{Definitions: f.definitions, SLO: slo, Tokenizer: f.tokenizer, Records: f.records, Scrapes: f.scrapes}, inputs...)
	if err != nil {
		return nil, usageError(flagError(err))
	}
	if f.tokenizer == "" {
		// Say which tokenizer.json counted the text, when a trace's
		// recorded one was found: the count-based checks depend on it.
		for _, t := range res.Traces {
			if t.TokenizerFile != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "tokenizer: %s (recorded in %s)\n", t.TokenizerFile, t.Path)
			}
		}
	}
	return res, nil
}

func newAnalyzeCmd() *cobra.Command {
	var (
		tf          traceFlags
		by          []string
		metrics     []string
		format      string
		wide        bool
		listMetrics bool
		capSLO      string
	)
	cmd := &cobra.Command{
		Use:   "analyze TRACE...",
		Short: "Turn traces into a summary, the concurrency-sweep table, metric tables or JSON, with trust warnings",
		Long: `analyze reads traces offline and prints, by default, a summary that fits 100
columns: one block per label and load level (concurrency, or request rate
for open-loop phases) with TTFT, TPOT, ITL and E2E at p50/p90/p95/p99, the
per-stream and aggregate output tok/s with their 95% intervals, what failed
and why, and the trust warnings that change how the numbers read (not
streamed, usage mismatch, implausible speed, stopped early, did not count,
client fell behind …), each with a numbered note. With several labels, each
block after the first label's says how the medians changed ("vs A: per
stream +12.0% (p=0.002)"; Mann-Whitney U). Label a trace with name=path;
otherwise its header's label is used.

--wide (or --format table) prints the wide tables instead: the
concurrency-sweep comparison with one column per label, each cell
"per-stream / aggregate tok/s" and the TTFT p50, a Δ column with two labels,
and every warning's evidence; --metrics names the columns of a metric table
(one row per group). A cell whose requests did not all succeed says so ("4
of 8 failed: http-status", or "all 8 failed: http-status"), with the
server's own error message as a footnote.

csv is tidy: one row per label and level, one value per column
(per_stream_tps_median, per_stream_tps_lo, …, requests_failed,
error_class). In csv and json modes the warnings go to stderr (and into the
JSON document). docs/METRICS.md defines every metric and column.

A capacity trace (made by 'llmreplay capacity') also gets its answer after
the summary or tables, decided again from its probes the way 'capacity --from' does:
the largest load meeting the trace's SLO with its 95% interval, the
latencies and throughput there, the knee of aggregate throughput, or why it
could not be determined. --capacity-slo asks for another SLO, nothing
sent; --slo's goodput bounds then apply to a goodput>=P% term. JSON adds a
"capacity" list; csv puts the answer lines on stderr.`,
		Example: `  # the summary of three servers, then their concurrency-sweep comparison side by side
  llmreplay analyze q4=q4.trace.zst q8=q8.trace.zst vllm=vllm.trace.zst
  llmreplay analyze --wide q4=q4.trace.zst q8=q8.trace.zst vllm=vllm.trace.zst

  # chosen metrics by input length, as Markdown
  llmreplay analyze run.trace.zst --by input-tokens --metrics ttft_p50,ttft_p99,prefill_tps --format markdown

  # a multi-turn run: TTFT per session turn and what the prompt cache saved
  llmreplay analyze chat.trace.zst --by turn --metrics ttft_p50,cached_tokens,prefill_saved,cache_speedup

  # the same trace read the way vLLM's bench serve would, as JSON
  llmreplay analyze run.trace.zst --definitions vllm --format json

  # a capacity trace: its answer for the recorded SLO, then for a tighter one
  llmreplay analyze cap.trace.zst
  llmreplay analyze cap.trace.zst --capacity-slo 'ttft_p90<=500ms'

  # every metric name with its definition
  llmreplay analyze --list-metrics`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if listMetrics {
				return printMetrics(out)
			}
			keys, err := normalizeKeys(by)
			if err != nil {
				return err
			}
			for _, m := range metrics {
				if _, _, err := analyze.LookupMetric(m); err != nil {
					return metricFlagError("--metrics", m, err)
				}
			}
			if wide {
				if cmd.Flags().Changed("format") && format != "table" {
					return usagef("--wide is --format table (the wide tables): drop --wide or --format %s", format)
				}
				format = "table"
			}
			switch format {
			case "summary", "table", "markdown", "csv", "json":
			default:
				return usagef("unknown --format %q: use summary, table, markdown, csv or json", format)
			}
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			views, err := capacityViews(cmd.ErrOrStderr(), args, capSLO, goodputOverride(cmd, tf.slo))
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("by") {
				keys = render.DefaultLevels(res)
			}
			if format == "json" {
				doc := analyze.NewDocument(res, keys)
				if err := render.RenderWarnings(cmd.ErrOrStderr(), doc.Warnings); err != nil {
					return err
				}
				return writeAnalyzeJSON(out, doc, views)
			}
			if format == "summary" && len(metrics) == 0 {
				if err := render.RenderSummaryText(out, render.BuildSummary(res, render.SummaryOptions{By: keys})); err != nil {
					return err
				}
				writeCapacityViews(out, views, false)
				return nil
			}
			t, err := render.BuildTable(res, render.TableOptions{By: keys, Metrics: metrics, Raw: format == "csv"})
			if err != nil {
				return flagError(usageError(err))
			}
			switch format {
			case "csv":
				if err := render.RenderWarnings(cmd.ErrOrStderr(), analyze.AllWarnings(res, keys)); err != nil {
					return err
				}
				capacityVerdictLines(cmd.ErrOrStderr(), views)
				return render.RenderCSV(out, t)
			case "markdown":
				if err := render.RenderMarkdown(out, t); err != nil {
					return err
				}
				writeCapacityViews(out, views, true)
				return nil
			}
			if err := render.RenderText(out, t); err != nil {
				return err
			}
			writeCapacityViews(out, views, false)
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringSliceVar(&by, "by", render.DefaultBy(), "group rows by: concurrency, rate (open-loop phases' requests/s), input-tokens, phase, label, repeat, turn (a session's turn; single requests are turn 1) (comma-separated for several); default: concurrency, or rate when the traces hold rate phases")
	cmd.Flags().StringSliceVar(&metrics, "metrics", nil, "print the metric table with these columns, e.g. ttft_p99,per_stream_tps_min (see --list-metrics)")
	cmd.Flags().StringVar(&format, "format", "summary", "summary (one block per label and level), table (the wide tables, as --wide), markdown, csv or json")
	cmd.Flags().BoolVar(&wide, "wide", false, "print the wide tables instead of the summary: the concurrency sweep with one column per label, or --metrics' columns, with every warning's evidence")
	cmd.Flags().BoolVar(&listMetrics, "list-metrics", false, "print every metric with its definition and exit")
	capacityFlag(cmd, &capSLO)
	return cmd
}

func normalizeKeys(by []string) ([]string, error) {
	var keys []string
	for _, k := range by {
		n, err := analyze.NormalizeKey(k)
		if err != nil {
			return nil, flagError(usageError(err))
		}
		keys = append(keys, n)
	}
	return keys, nil
}

func printMetrics(w io.Writer) error {
	for _, m := range analyze.Metrics {
		stats := m.Stats()
		var names []string
		for _, s := range stats {
			if s != "" {
				names = append(names, "_"+s)
			}
		}
		suffix := ""
		if len(names) > 0 {
			suffix = " (" + strings.Join(names, " ") + ")"
		}
		if _, err := fmt.Fprintf(w, "%s [%s]%s\n    %s\n", m.Name, m.Unit, suffix, m.Doc); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\ndefinition sets (--definitions): %s\n", strings.Join(analyze.DefinitionNames(), ", "))
	return err
}

func newCheckCmd() *cobra.Command {
	var (
		tf          traceFlags
		claims      []string
		claimsFile  string
		minSamples  int
		acceptPoint bool
		acceptPart  bool
		format      string
	)
	cmd := &cobra.Command{
		Use:   "check TRACE...",
		Short: "Check written speed claims against traces: holds, does not hold, or inconclusive",
		Long: `check evaluates claims of the form

  metric[_stat]{key=value,...} op number[unit]     # comment

e.g. per_stream_tps{concurrency=1} >= 490 or ttft_p50{concurrency=32} < 0.3s,
against every run of the traces that the selector matches (keys: label, phase,
concurrency, rate, input_tokens, repeat, turn). A claim holds when the metric's whole 95%
interval satisfies it, does not hold when none of it does, and is
inconclusive when the interval straddles the bound or there are too few
samples. A median's interval needs 6 samples (runs, for a per-run metric
such as aggregate_tps; requests, for a per-request one), a p10 or p90's 36,
a p99's 368; --min-samples (default 3) is a floor on top, and the only rule
for values without an interval (_mean, _min, _max). The reason of an
inconclusive claim says which number applies and how many more samples
would reach it. Most published figures come from one run, which has no
interval: --accept-point judges such values on the measured value itself
once --min-samples samples stand behind it (--min-samples 1 for one run).

Exit status: 0 every claim holds; 1 at least one does not hold;
3 none fails but at least one is inconclusive; 2 bad input.`,
		Example: `  llmreplay check vllm.trace.zst --claim 'per_stream_tps{concurrency=1} >= 300' --claim 'aggregate_tps{concurrency=32} >= 5600'

  # a published table written down as claims
  llmreplay check vllm.trace.zst --claims traces/claims/vllm-rtx5090-bf16.claims`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := parseClaimFlags(claims, claimsFile)
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				return usagef("no claims: give --claim 'metric{key=value} >= N' or --claims FILE")
			}
			if minSamples < 1 {
				return usagef("--min-samples %d: give at least 1", minSamples)
			}
			if format != "text" && format != "json" {
				return usagef("unknown --format %q: use text or json", format)
			}
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			// What limits the evidence itself is said before the verdicts.
			for _, w := range res.Warnings {
				if w.Code == analyze.WarnDuplicateTrace || w.Code == analyze.WarnTruncated || w.Code == analyze.WarnPartial {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w.Message)
				}
			}
			var vs []claim.Verdict
			fails, unsure := 0, 0
			for _, c := range cs {
				v := claim.Check(res, c, claim.CheckOptions{MinSamples: minSamples, AcceptPoint: acceptPoint, AcceptPartial: acceptPart})
				switch v.Verdict {
				case claim.DoesNotHold:
					fails++
				case claim.Inconclusive:
					unsure++
				}
				vs = append(vs, v)
			}
			if format == "json" {
				if err := claim.WriteVerdictsJSON(cmd.OutOrStdout(), vs); err != nil {
					return err
				}
			} else if err := claim.RenderVerdicts(cmd.OutOrStdout(), vs); err != nil {
				return err
			}
			switch {
			case fails > 0:
				return &exitError{code: exitClaimFails, err: fmt.Errorf("%d of %d claims do not hold", fails, len(cs))}
			case unsure > 0:
				return &exitError{code: exitInconclusive, err: fmt.Errorf("%d of %d claims are inconclusive", unsure, len(cs))}
			}
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "a claim, e.g. 'per_stream_tps{concurrency=1} >= 490' (repeatable)")
	cmd.Flags().StringVar(&claimsFile, "claims", "", "a file of claims, one per line, # comments")
	cmd.Flags().IntVar(&minSamples, "min-samples", claim.MinSamples, "fewest samples behind a value for a verdict other than inconclusive (a median's 95% interval needs 6 however low this is, unless --accept-point)")
	cmd.Flags().BoolVar(&acceptPart, "accept-partial", false, "judge claims over traces that hold fewer requests than their run planned (stopped or cut off); otherwise they are at most inconclusive")
	cmd.Flags().BoolVar(&acceptPoint, "accept-point", false, "judge values with too few samples for a 95% interval (a few runs, as published figures are) on the value itself, given --min-samples of them (1 for a single run); the reason says so")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// parseClaimFlags reads --claim values and a --claims file (check, report).
func parseClaimFlags(claims []string, claimsFile string) ([]claim.Claim, error) {
	var cs []claim.Claim
	for _, s := range claims {
		c, err := claim.ParseClaim(s)
		if err != nil {
			return nil, claimError("", err)
		}
		cs = append(cs, c)
	}
	if claimsFile != "" {
		f, err := os.Open(claimsFile)
		if err != nil {
			return nil, usagef("--claims: %v", err)
		}
		more, err := claim.ParseClaims(f)
		f.Close()
		if err != nil {
			return nil, claimError(claimsFile, err)
		}
		cs = append(cs, more...)
	}
	return cs, nil
}
