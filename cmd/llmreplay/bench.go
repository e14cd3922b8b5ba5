package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

func newBenchCmd() *cobra.Command {
	var (
		f       replayFlags
		cfg     bench.Config
		shape   string
		profile string
		findCap string
		wide    bool
	)
	cmd := &cobra.Command{
		Use:     "bench [--url URL] [flags]",
		Short:   "The concurrency sweep in one command: per-stream vs aggregate tok/s and TTFT per concurrency",
		Long:    helpText("bench"),
		Example: helpText("bench.example"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Given empty it is still asked for (a variable that expanded
			// to nothing): refuse it rather than run the sweep instead.
			if findCap != "" || cmd.Flags().Changed("find-capacity") {
				return benchFindCapacity(cmd, &f, findCap, profile, shape, cfg)
			}
			cfg.Shape = workload.Shape(shape)
			if f.cfg.URL == "" {
				cfg.Profile = profile
			} else if cmd.Flags().Changed("profile") {
				return usagef("--profile applies to the built-in simulator only: drop it, or drop --url")
			}
			// A given 0 is the command line's own case: bench.Config reads
			// 0 as its default, which is not what a user typing 0 means.
			// Negative values are the library's to refuse (one validator).
			for _, n := range []struct {
				flag string
				v    int
			}{{"max-tokens", cfg.MaxTokens}, {"repeats", cfg.Repeats}} {
				if n.v == 0 {
					return usagef("--%s %d: give at least 1", n.flag, n.v)
				}
			}
			rc, err := f.config(nil, "")
			if err != nil {
				return err
			}
			rc.Tokenizer = cfg.Tokenizer // the same tokenizer builds the prompts and, with --send-token-ids, their ids
			cfg.Replay = rc
			// Every setting is checked before anything starts or prints.
			if err := cfg.Check(); err != nil {
				return flagError(usageError(err))
			}
			if err := checkFolder("--results", cfg.Results); err != nil {
				return err
			}
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f.cfg.URL == "" {
				fmt.Fprintf(errw, "no --url: using llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", profile)
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
					notes.ScrapeWarning()
				}
				return usageErrorIfInput(flagError(err))
			}
			res.WriteText(out, wide)
			res.WriteFiles(errw)
			notes.ScrapeWarning()
			return f.runExit(res.Summary, "stopped: %s holds every request that finished")
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.cfg.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url ("+strings.Join(sim.ProfileNames(), ", ")+")")
	fs.IntSliceVar(&cfg.Concurrency, "concurrency", bench.DefaultConcurrency, "concurrency levels: streams released together")
	fs.IntSliceVar(&cfg.InputTokens, "input-tokens", bench.DefaultInputTokens, "exact prompt length(s) in tokens")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", bench.DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&cfg.Repeats, "repeats", bench.DefaultRepeats, "runs of each level (the table shows medians)")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base or a tokenizer.json path")
	fs.StringVar(&shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.StringVar(&cfg.Results, "results", bench.DefaultResults, "folder for the workload, trace and tables")
	fs.StringVar(&cfg.Definitions, "definitions", analyze.DefaultDefinitions, "metric definition set for the table")
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
			return flagError(usageError(err))
		}
	}
	return err
}

// benchFindCapacity is 'bench --find-capacity SLO': the capacity search
// with bench's server, workload and results flags, on the concurrency axis.
func benchFindCapacity(cmd *cobra.Command, f *replayFlags, slo, profile, shape string, cfg bench.Config) error {
	fs := cmd.Flags()
	for _, name := range []string{"repeats", "definitions"} {
		if fs.Changed(name) {
			return usagef("--%s applies to the sweep, not to --find-capacity: drop one of them", name)
		}
	}
	if len(cfg.InputTokens) != 1 {
		return usagef("--find-capacity takes one --input-tokens length, not %d", len(cfg.InputTokens))
	}
	// The search's own checks name capacity's flags (--slo, --range),
	// which bench does not have: what the user typed here is checked
	// first, in bench's words.
	if strings.TrimSpace(slo) == "" {
		return usagef("--find-capacity is empty: give the SLO the load must meet, e.g. --find-capacity 'ttft_p90<=1s'")
	}
	if _, err := capacity.ParseSLO(slo); err != nil {
		return sloFlagError("--find-capacity", err)
	}
	ls := live.Settings{SLO: slo, Axis: live.AxisConcurrency, TimeScale: 1, URL: f.cfg.URL, InputTokens: cfg.InputTokens[0],
		MaxTokens: cfg.MaxTokens, Tokenizer: cfg.Tokenizer, Shape: shape, Results: cfg.Results}
	if fs.Changed("profile") {
		ls.Profile = profile
	}
	if fs.Changed("concurrency") {
		for _, c := range cfg.Concurrency {
			if c < 1 || c > live.MaxUsers {
				return usagef("--concurrency %d: with --find-capacity give levels from 1 to %d (the lowest and highest bound the search)", c, live.MaxUsers)
			}
		}
		ls.Range = fmt.Sprintf("%d:%d", slices.Min(cfg.Concurrency), slices.Max(cfg.Concurrency))
	}
	return runCapacity(cmd, f, ls)
}
