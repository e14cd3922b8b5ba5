package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/trace"
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
	cmd.Flags().StringVar(&f.tokenizer, "tokenizer", "", "count received text with this tokenizer instead of the trace's (o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache)")
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
		Use:     "analyze TRACE...",
		Short:   "Turn traces into a summary, the concurrency-sweep table, metric tables or JSON, with trust warnings",
		Long:    helpText("analyze"),
		Example: helpText("analyze.example"),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if listMetrics {
				return render.WriteMetricList(out)
			}
			keys, err := normalizeKeys(by)
			if err != nil {
				return err
			}
			for i, m := range metrics {
				if _, _, err := analyze.LookupMetric(m); err != nil {
					return metricFlagError("--metrics", m, err)
				}
				metrics[i] = analyze.MetricName(m)
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
			views, err := tf.capacityViews(cmd, args, capSLO)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("by") {
				keys = render.DefaultLevels(res)
			}
			if format == "json" {
				res.Want(metrics...) // any percentile --metrics names joins the groups' metrics
				doc := analyze.NewDocument(res, keys)
				if err := render.RenderWarnings(errw, doc.Warnings); err != nil {
					return err
				}
				return capacity.WriteAnalyzeJSON(out, doc, views)
			}
			if format == "summary" && len(metrics) == 0 {
				if err := render.RenderSummaryText(out, render.BuildSummary(res, render.SummaryOptions{By: keys})); err != nil {
					return err
				}
				capacity.WriteViews(out, views, false)
				return nil
			}
			t, err := render.BuildTable(res, render.TableOptions{By: keys, Metrics: metrics, Raw: format == "csv"})
			if err != nil {
				return flagError(usageError(err))
			}
			switch format {
			case "csv":
				if err := render.RenderWarnings(errw, analyze.AllWarnings(res, keys)); err != nil {
					return err
				}
				capacity.WriteViewLines(errw, views)
				return render.RenderCSV(out, t)
			case "markdown":
				err = render.RenderMarkdown(out, t)
			default:
				err = render.RenderText(out, t)
			}
			if err == nil {
				capacity.WriteViews(out, views, format == "markdown")
			}
			return err
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

// capacityFlag registers --capacity-slo (analyze and report; their --slo
// is the goodput bounds).
func capacityFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "capacity-slo", "", "for capacity traces (made by 'llmreplay capacity'): decide the answer again for this SLO, e.g. 'ttft_p90<=500ms' (default: the SLO the trace recorded); nothing is sent")
}

// capacityViews are the inputs' capacity traces judged again
// (live.Views) for --capacity-slo, default each trace's own SLO; --slo,
// when given, replaces the goodput bounds a goodput>=P% term counts
// against.
func (f *traceFlags) capacityViews(cmd *cobra.Command, args []string, sloText string) ([]capacity.View, error) {
	var slo capacity.SLO
	if strings.TrimSpace(sloText) != "" {
		var err error
		if slo, err = capacity.ParseSLO(sloText); err != nil {
			return nil, sloFlagError("--capacity-slo", err)
		}
	}
	var good analyze.SLO
	if cmd.Flags().Changed("slo") {
		good, _ = analyze.ParseSLO(f.slo) // refused already by analyzeInputs
	}
	views, err := live.Views(args, slo, good, cmd.ErrOrStderr())
	if err != nil {
		return nil, usageError(err)
	}
	if slo != nil && len(views) == 0 {
		return nil, usagef("--capacity-slo: none of the traces is a capacity trace (made by 'llmreplay capacity'): drop the flag or give such a trace")
	}
	return views, nil
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
