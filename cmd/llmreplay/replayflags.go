package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/progress"
	"github.com/llmreplay/llmreplay/workload"
)

// replayFlags are the endpoint flags of every command that sends
// requests (replay, bench, probe, capacity), and what the command does
// with the run's end: its exit status and the progress display.
type replayFlags struct {
	replay.Flags
	failOnError bool
	quiet       bool
}

func (f *replayFlags) register(cmd *cobra.Command, defaultAPI string) {
	fs := cmd.Flags()
	f.Register(fs, defaultAPI)
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress display (the summary and errors still print)")
	fs.BoolVar(&f.failOnError, "fail-on-error", false, "exit with status 1 when any request failed")
}

// config is the replay.Config the flags give, for workload wl (cut to
// a --shard's part) and trace out, its errors in the flags' words.
func (f *replayFlags) config(wl *workload.Workload, out string) (replay.Config, error) {
	cfg, err := f.Resolve(wl, out, time.Now())
	return cfg, flagError(err)
}

// runExit is the exit status of a run that ended: 130 when it was
// stopped (stopped says so, with the trace's path), 1 when not one
// request succeeded, or with --fail-on-error when any failed.
func (f *replayFlags) runExit(sum *replay.Summary, stopped string) error {
	if sum.Stopped {
		return cli.Exit(130, fmt.Errorf(stopped, sum.Trace))
	}
	if err := sum.NoneSucceeded(); err != nil {
		return cli.Exit(1, err)
	}
	if f.failOnError && sum.Failed > 0 {
		return cli.Exit(1, fmt.Errorf("%d requests failed (--fail-on-error)", sum.Failed))
	}
	return nil
}

// progress starts the progress display on stderr for a run of cfg and
// hooks it to the run; nil with -q. The caller closes it when the run
// returns. It is a live bar on a terminal and plain lines elsewhere.
func (f *replayFlags) progress(cmd *cobra.Command, cfg *replay.Config) *progress.Display {
	if f.quiet {
		return nil
	}
	w := cmd.ErrOrStderr()
	d := progress.New(cmd.Context(), progress.Options{W: w, Terminal: progress.IsTerminal(w), Grace: cfg.Grace})
	cfg.OnPhase = d.Phase
	cfg.OnRecord = d.Record
	return d
}
