package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/internal/safetext"
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
		Use:   "bench [--url URL] [flags]",
		Short: "The concurrency sweep in one command: per-stream vs aggregate tok/s and TTFT per concurrency",
		Long: `bench builds the concurrency-sweep workload (800-token prompts asking the model to count
up from 1, capped at 256 output tokens, bursts of 1, 4, 8 and 16 streams
released together), replays it, and prints the summary 'llmreplay analyze'
prints: for each concurrency the per-stream and aggregate output tok/s with
their 95% intervals, TTFT, TPOT, ITL and E2E at p50/p90/p95/p99, failures and
trust warnings. --wide prints the wide concurrency-sweep table instead.

Without --url it starts llmreplay's simulated server in-process (--profile)
and says so in its output and in the trace header. The workload, the trace,
the wide table as Markdown, a JSON analysis and an HTML report are written
under --results, named by label and time; 'llmreplay analyze' puts several runs side by side.`,
		Example: `  # on the built-in simulator (no GPU needed)
  llmreplay bench
  llmreplay bench --profile llamacpp-rtx5090-q4km --concurrency 1,4,8,16,32

  # against a real server
  llmreplay bench --url http://127.0.0.1:8000 --label "vLLM bf16" --concurrency 1,4,8,16,32`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Given empty it is still asked for (a variable that expanded
			// to nothing): refuse it rather than run the sweep instead.
			if findCap != "" || cmd.Flags().Changed("find-capacity") {
				return benchFindCapacity(cmd, &f, findCap, profile, shape, cfg)
			}
			cfg.Shape = workload.Shape(shape)
			if f.url == "" {
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
			if f.url == "" {
				fmt.Fprintf(errw, "no --url: using llmreplay's SIMULATED server, profile %s (figures are the model's, not a real engine's)\n", profile)
			}
			cfg.Replay.OnAPI = announceAPI(errw)
			cfg.Replay.OnServerMetrics = announceMetrics(errw)
			cfg.Replay.OnWatch = announceWatch(errw, cfg.Replay.ServerMetricsInterval)
			notes := &runNotes{w: errw}
			cfg.Replay.Sinks = append(cfg.Replay.Sinks, notes)
			disp := f.progress(cmd, &cfg.Replay)
			res, err := bench.Run(cmd.Context(), cfg)
			disp.Close()
			if err != nil {
				if res != nil && res.Summary != nil {
					fmt.Fprintln(errw, res.Summary)
					notes.scrapeWarning()
				}
				return usageErrorIfInput(flagError(err))
			}
			if res.Simulated {
				fmt.Fprintf(out, "server: SIMULATED (profile %s)\n", res.Profile)
			} else {
				fmt.Fprintf(out, "server: %s (model %s)\n", res.URL, safetext.Show(res.Summary.Model))
			}
			if wide {
				fmt.Fprint(out, res.Table)
			} else {
				fmt.Fprint(out, res.Compact)
			}
			fmt.Fprintf(errw, "%s\nserver tokenizer: %s\ntrace: %s\ntable: %s\njson:  %s\nreport: %s\n", res.Summary, safetext.Show(res.Summary.TokenizeLine()), res.Trace, res.TableFile, res.JSONFile, res.ReportFile)
			notes.scrapeWarning()
			if res.Summary.Stopped {
				return &exitError{code: 130, err: fmt.Errorf("stopped: %s holds every request that finished", res.Trace)}
			}
			if err := noneSucceeded(res.Summary); err != nil {
				return err
			}
			if f.failOnError && res.Summary.Failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d requests failed (--fail-on-error)", res.Summary.Failed)}
			}
			return nil
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.url, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url ("+strings.Join(profileNames(), ", ")+")")
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

func profileNames() []string {
	var names []string
	for _, p := range sim.Profiles() {
		names = append(names, p.Name)
	}
	return names
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
