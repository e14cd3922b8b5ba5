package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

func newReplayCmd() *cobra.Command {
	var f replayFlags
	var sf shardFlags
	var out string
	var force bool
	var duration time.Duration
	cmd := &cobra.Command{
		Use:     "replay WORKLOAD --url URL [flags]",
		Short:   "Send a workload to a server on its schedule and record every streamed chunk",
		Long:    helpText("replay"),
		Example: helpText("replay.example"),
		Args:    oneFile("replay", "a workload file: llmreplay replay NAME.workload.zst --url URL (make one with 'llmreplay workload build -o NAME.workload.zst')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := workload.Open(args[0])
			if err != nil {
				return usageError(err)
			}
			cfg, err := f.config(wl, out)
			if err != nil {
				return err
			}
			cfg.Duration = duration
			if err := sf.apply(&cfg, wl, time.Now()); err != nil {
				return err
			}
			if w := clockWarning(&cfg); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			defaultOut := cfg.Trace == ""
			if defaultOut {
				cfg.Trace = trace.DefaultPath(cfg.Label, cfg.Model, time.Now(), shardSuffix(cfg.Shard))
			}
			// Bad settings are reported before anything is created.
			res, err := cfg.Resolve()
			if err != nil {
				return flagError(err)
			}
			if res.BeyondDuration > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "duration: %v bounds each rate or trace phase: %d of %d requests are due within it, %d later ones are not sent\n",
					duration, len(res.Workload.Requests), len(cfg.Workload.Requests), res.BeyondDuration)
			}
			if res.TokenizerSource != "" && f.cfg.Tokenizer == "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "tokenizer: %s (recorded in the workload)\n", res.TokenizerSource)
			}
			if defaultOut {
				if p := outfile.FileInTheWay(filepath.Dir(cfg.Trace)); p != "" {
					return usagef("replay writes its trace to %s when no -o is given, but %s is a file, not a folder; give -o NAME.trace.zst, or move the file away", cfg.Trace, p)
				}
				if err := os.MkdirAll(filepath.Dir(cfg.Trace), 0o755); err != nil {
					return err
				}
			}
			if err := outfile.Check(cfg.Trace, force, args[0], cfg.Tokenizer); err != nil {
				return usageError(err)
			}
			if force {
				if err := outfile.Replace(cfg.Trace); err != nil {
					return err
				}
			}
			return runReplay(cmd, cfg, &f, sf.startIn)
		},
	}
	f.register(cmd, replay.DefaultAPI)
	sf.register(cmd)
	cmd.Flags().StringVar(&f.cfg.URL, "url", "", "server base address, e.g. http://127.0.0.1:8080 (required)")
	cmd.Flags().StringVar(&f.cfg.Tokenizer, "tokenizer", "", "with --send-token-ids: the workload's tokenizer.json, by path or model id (not needed for o200k_base/cl100k_base)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default results/LABEL-TIME.trace.zst)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the output file if it exists (never an input)")
	cmd.Flags().DurationVar(&duration, "duration", 0, "bound each rate or trace phase in time: requests the schedule puts later than this after the phase's start are not sent (recorded in the trace; 0: the whole schedule)")
	return cmd
}

// runReplay runs one replay and prints its summary. startIn is
// --start-in when it set cfg.StartAt, for the late-start warning's words.
func runReplay(cmd *cobra.Command, cfg replay.Config, f *replayFlags, startIn time.Duration) error {
	errw := cmd.ErrOrStderr()
	cfg.Announce(errw)
	notes := &replay.Notes{W: errw, StartAt: cfg.StartAt, StartIn: startIn}
	cfg.Sinks = append(cfg.Sinks, notes)
	disp := f.progress(cmd, &cfg)
	sum, err := replay.Run(cmd.Context(), cfg)
	disp.Close()
	if err != nil {
		if sum == nil {
			return flagError(err)
		}
		fmt.Fprintln(errw, sum)
		notes.ScrapeWarning()
		return err
	}
	// The summary analyze prints, read back from the trace (not from a
	// device such as -o /dev/stdout, which holds the trace itself).
	if outfile.Regular(sum.Trace) {
		if res, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: sum.Trace}); err != nil {
			fmt.Fprintf(errw, "no summary: %v (llmreplay analyze %s says more)\n", err, sum.Trace)
		} else if err := render.RenderSummaryText(cmd.OutOrStdout(), render.BuildSummary(res, render.SummaryOptions{})); err != nil {
			return err
		}
	}
	sum.WriteText(errw)
	notes.ScrapeWarning()
	return f.runExit(sum, "stopped: the trace %s holds every request that finished")
}
