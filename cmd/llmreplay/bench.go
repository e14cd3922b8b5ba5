package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/replay"
)

func newBenchCmd() *cobra.Command {
	var (
		f       replayFlags
		cfg     bench.Config
		findCap string
		wide    bool
	)
	cmd := &cobra.Command{
		Use:   "bench [--url URL] [flags]",
		Short: "The concurrency sweep in one command: per-stream vs aggregate tok/s and TTFT per concurrency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Given empty it is still asked for (a variable that expanded
			// to nothing): refuse it rather than run the sweep instead.
			if findCap != "" || cmd.Flags().Changed("find-capacity") {
				return benchFindCapacity(cmd, &f, findCap, cfg)
			}
			cfg.Replay.URL = f.Config.URL
			if err := cfg.Stated(given(cmd, nil)); err != nil {
				return flagError(err)
			}
			rc, err := f.config(nil, "")
			if err != nil {
				return err
			}
			rc.Tokenizer = cfg.Tokenizer // the same tokenizer builds the prompts and, with --send-token-ids, their ids
			cfg.Replay = rc
			// Every setting is checked before anything starts or prints.
			if err := cfg.Check(); err != nil {
				return flagError(cli.Usage(err))
			}
			if err := outfile.CheckFolder("--results", cfg.Results); err != nil {
				return cli.Usage(err)
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f.Config.URL == "" {
				fmt.Fprintf(errw, "no --url: using llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", cfg.Profile)
			}
			cfg.Replay.Announce(errw)
			notes := &replay.Notes{W: errw}
			cfg.Replay.Sinks = append(cfg.Replay.Sinks, notes)
			disp := f.progress(cmd, &cfg.Replay)
			res, err := bench.Run(cmd.Context(), cfg)
			disp.Close()
			if err != nil {
				if res != nil && res.Summary != nil {
					fmt.Fprintln(errw, res.Summary)
					notes.Warnings()
				}
				return usageErrorIfInput(flagError(err))
			}
			res.WriteText(out, wide)
			res.WriteFiles(errw)
			notes.Warnings()
			return f.runExit(res.Summary, "stopped: %s holds every request that finished")
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.Config.URL, "url", "", "server base address; empty: the built-in simulator")
	cfg.RegisterFlags(fs)
	fs.BoolVar(&wide, "wide", false, "print the wide concurrency-sweep table (one column per label, with the server's running/waiting requests and KV cache when its /metrics was scraped) instead of the summary")
	fs.StringVar(&findCap, "find-capacity", "", "instead of the sweep, search the largest concurrency meeting this SLO (as 'llmreplay capacity --slo', between the lowest and highest --concurrency when given, else 1..64)")
	return cmd
}

// usageErrorIfInput treats errors from building the workload (bad
// tokenizer, sizes) as bad input; anything else keeps exit status 1.
func usageErrorIfInput(err error) error {
	msg := err.Error()
	for _, s := range []string{"tokenizer", "input-tokens", "max-tokens", "too small", "out of range", "unknown"} {
		if strings.Contains(msg, s) {
			return flagError(cli.Usage(err))
		}
	}
	return err
}

// benchFindCapacity is 'bench --find-capacity SLO': the capacity search
// with bench's server, workload and results flags, on the concurrency axis.
func benchFindCapacity(cmd *cobra.Command, f *replayFlags, slo string, cfg bench.Config) error {
	w := live.Sweep{SLO: slo, URL: f.Config.URL, Profile: cfg.Profile, Concurrency: cfg.Concurrency, InputTokens: cfg.InputTokens,
		MaxTokens: cfg.MaxTokens, Tokenizer: cfg.Tokenizer, Shape: string(cfg.Shape), Results: cfg.Results}
	names := map[string]string{"SLO": "--find-capacity"}
	ls, err := w.Settings(given(cmd, names))
	if err != nil {
		return flagErrorIn(err, names)
	}
	return runCapacity(cmd, f, ls)
}
