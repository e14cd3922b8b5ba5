package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

func newReplayCmd() *cobra.Command {
	var f replayFlags
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "replay WORKLOAD --url URL [flags]",
		Short: "Send a workload to a server on its schedule and record every streamed chunk",
		Args:  cli.OneFile("replay", "a workload file: llmreplay replay NAME.workload.zst --url URL (make one with 'llmreplay workload build -o NAME.workload.zst')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := workload.Open(args[0])
			if err != nil {
				return cli.Usage(err)
			}
			cfg, err := f.config(wl, out)
			if err != nil {
				return err
			}
			if err := cfg.Prepare(time.Now(), force, cmd.ErrOrStderr(), args[0], cfg.Tokenizer); err != nil {
				return flagError(err)
			}
			return runReplay(cmd, cfg, &f)
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.Config.URL, "url", "", "server base address, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&f.Config.Tokenizer, "tokenizer", "", "with --send-token-ids: the workload's tokenizer.json, by path or model id (not needed for o200k_base/cl100k_base)")
	fs.StringVarP(&out, "output", "o", "", "trace file to write (default results/LABEL-TIME.trace.zst)")
	fs.BoolVar(&force, "force", false, "replace the output file if it exists (never an input)")
	fs.DurationVar(&f.Config.Duration, "duration", 0, "bound each rate or trace phase in time: requests the schedule puts later than this after the phase's start are not sent (recorded in the trace; 0: the whole schedule)")
	fs.StringVar(&f.Settings.Shard, "shard", "", "send only part I of N of the workload (I from 0), e.g. 0/4; merge the parts with 'trace merge'")
	fs.IntVar(&f.Settings.Shards, "shards", 0, "the number of parts when the part's index comes from $"+replay.JobIndexEnv+" (a Kubernetes Indexed Job)")
	fs.StringVar(&f.Settings.StartAt, "start-at", "", "wait until this wall-clock time (RFC 3339, e.g. 2026-12-03T10:00:00Z) before starting, so every shard starts together")
	fs.DurationVar(&f.Settings.StartIn, "start-in", 0, "wait this long before starting (for shards started together by hand; prefer --start-at across machines)")
	return cmd
}

// runReplay runs one replay and prints its summary.
func runReplay(cmd *cobra.Command, cfg replay.Config, f *replayFlags) error {
	errw := cmd.ErrOrStderr()
	cfg.Announce(errw)
	notes := &replay.Notes{W: errw, StartAt: cfg.StartAt, StartIn: f.Settings.StartIn}
	cfg.Sinks = append(cfg.Sinks, notes)
	disp := f.progress(cmd, &cfg)
	sum, err := replay.Run(cmd.Context(), cfg)
	disp.Close()
	if err != nil {
		if sum == nil {
			return flagError(err)
		}
		fmt.Fprintln(errw, sum)
		notes.Warnings()
		return err
	}
	if err := render.WriteTraceSummary(cmd.OutOrStdout(), errw, sum.Trace); err != nil {
		return err
	}
	sum.WriteText(errw)
	notes.Warnings()
	return f.runExit(sum, "stopped: the trace %s holds every request that finished")
}
