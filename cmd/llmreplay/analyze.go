package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/cli"
)

// traceFlags are the flags analyze, check and report share.
type traceFlags struct {
	opts   analyze.Options
	slo    string
	capSLO string
}

func (f *traceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.opts.Definitions, "definitions", analyze.DefaultDefinitions,
		"compute metrics the way a tool does: "+strings.Join(analyze.DefinitionNames(), "|"))
	cmd.Flags().StringVar(&f.slo, "slo", analyze.DefaultSLO.String(), "goodput bounds: ttft=, tpot=, e2e= durations")
	cmd.Flags().BoolVar(&f.opts.MergeLabels, "merge-labels", false, "analyze traces that carry one label as one (refused otherwise: name each with name=path)")
	cmd.Flags().StringVar(&f.opts.Tokenizer, "tokenizer", "", "count received text with this tokenizer instead of the trace's (o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache)")
}

// capacityFlag registers --capacity-slo (analyze and report; their --slo
// is the goodput bounds).
func (f *traceFlags) capacityFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.capSLO, "capacity-slo", "", "for capacity traces (made by 'llmreplay capacity'): decide the answer again for this SLO, e.g. 'ttft_p90<=500ms' (default: the SLO the trace recorded); nothing is sent")
}

// analyzeInputs reads every TRACE argument (name=path, path or - for
// stdin) into one analysis. Every failure here is about the input: exit 2.
func (f *traceFlags) analyzeInputs(cmd *cobra.Command, args []string) (*analyze.Result, error) {
	res, err := analyze.AnalyzeArgs(f.opts, f.slo, args, cmd.InOrStdin(), cmd.ErrOrStderr())
	return res, cli.Usage(flagError(err))
}

// analyzeWithViews is analyzeInputs and the inputs' capacity traces
// judged again for --capacity-slo (default each trace's own SLO); --slo,
// when given, replaces the goodput bounds a goodput>=P% term counts
// against (analyze and report).
func (f *traceFlags) analyzeWithViews(cmd *cobra.Command, args []string) (*analyze.Result, []capacity.View, error) {
	res, err := f.analyzeInputs(cmd, args)
	if err != nil {
		return nil, nil, err
	}
	var good analyze.SLO
	if cmd.Flags().Changed("slo") {
		good, _ = analyze.ParseSLO(f.slo) // refused already by analyzeInputs
	}
	views, err := live.ViewsOf(args, f.capSLO, good, cmd.ErrOrStderr())
	return res, views, cli.Usage(flagErrorIn(err, map[string]string{"CapacitySLO": "--capacity-slo"}))
}

func newAnalyzeCmd() *cobra.Command {
	var (
		tf          traceFlags
		o           capacity.AnalysisOptions
		listMetrics bool
	)
	cmd := &cobra.Command{
		Use:   "analyze TRACE...",
		Short: "Turn traces into a summary, the concurrency-sweep table, metric tables or JSON, with trust warnings",
		RunE: func(cmd *cobra.Command, args []string) error {
			if listMetrics {
				return render.WriteMetricList(cmd.OutOrStdout())
			}
			for i, k := range o.By {
				n, err := analyze.NormalizeKey(k)
				if err != nil {
					return flagError(cli.Usage(err))
				}
				o.By[i] = n
			}
			if !cmd.Flags().Changed("by") {
				o.By = nil // the traces' own levels
			}
			for i, m := range o.Metrics {
				if _, _, err := analyze.LookupMetric(m); err != nil {
					return metricFlagError("--metrics", m, err)
				}
				o.Metrics[i] = analyze.MetricName(m)
			}
			names := map[string]string{"Format": "--format", "Wide": "--wide"}
			if err := o.Check(given(cmd, names)); err != nil {
				return flagErrorIn(err, names)
			}
			res, views, err := tf.analyzeWithViews(cmd, args)
			if err != nil {
				return err
			}
			return flagError(capacity.WriteAnalysis(cmd.OutOrStdout(), cmd.ErrOrStderr(), res, views, o))
		},
	}
	tf.register(cmd)
	tf.capacityFlag(cmd)
	cmd.Flags().StringSliceVar(&o.By, "by", render.DefaultBy(), "group rows by: concurrency, rate (open-loop phases' requests/s), input-tokens, phase, label, repeat, turn (a session's turn; single requests are turn 1) (comma-separated for several); default: concurrency, or rate when the traces hold rate phases")
	cmd.Flags().StringSliceVar(&o.Metrics, "metrics", nil, "print the metric table with these columns, e.g. ttft_p99,per_stream_tps_min (see --list-metrics)")
	cmd.Flags().StringVar(&o.Format, "format", "summary", "summary (one block per label and level), table (the wide tables, as --wide), markdown, csv or json")
	cmd.Flags().BoolVar(&o.Wide, "wide", false, "print the wide tables instead of the summary: the concurrency sweep with one column per label, or --metrics' columns, with every warning's evidence")
	cmd.Flags().BoolVar(&listMetrics, "list-metrics", false, "print every metric with its definition and exit")
	return cmd
}
