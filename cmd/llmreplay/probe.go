package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/probe"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

func newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "probe",
		Short:   "Short experiments with a verdict: does the server's prefix cache work",
		Long:    helpText("probe"),
		Example: helpText("probe.example"),
		Args:    cobra.ArbitraryArgs,
		RunE:    needsSubcommand,
	}
	cmd.AddCommand(newProbePrefixCacheCmd())
	return cmd
}

func newProbePrefixCacheCmd() *cobra.Command {
	var (
		f       replayFlags
		cfg     probe.Config
		shape   string
		profile string
		noCache bool
		mode    string
		shared  probe.SharedConfig
	)
	cmd := &cobra.Command{
		Use:     "prefix-cache [--url URL] [flags]",
		Short:   "Test the server's prefix cache: a repeated prompt must hit it, a new one miss",
		Long:    helpText("probe-prefix-cache"),
		Example: helpText("probe-prefix-cache.example"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("salt") {
				return usagef("--salt: the probe sends its prompts verbatim (a salt would keep them from the cache): drop it")
			}
			if f.cfg.URL != "" && (cmd.Flags().Changed("profile") || noCache) {
				return usagef("--profile and --no-prefix-cache apply to the built-in simulator only: drop them, or drop --url")
			}
			switch mode {
			case "repeat", "shared-system":
			default:
				return usagef("--mode %q: give repeat or shared-system", mode)
			}
			for _, fl := range []struct {
				name, mode string
			}{{"repeats", "repeat"}, {"shape", "repeat"}, {"system-tokens", "shared-system"}, {"rounds", "shared-system"}, {"round-requests", "shared-system"}} {
				if cmd.Flags().Changed(fl.name) && mode != fl.mode {
					return usagef("--%s applies to --mode %s only: drop it", fl.name, fl.mode)
				}
			}
			cfg.Shape = workload.Shape(shape)
			if mode == "shared-system" {
				shared.Tokenizer, shared.MaxTokens, shared.Seed = cfg.Tokenizer, cfg.MaxTokens, cfg.Seed
				shared.UserTokens = probe.DefaultUserTokens
				if cmd.Flags().Changed("input-tokens") {
					shared.UserTokens = cfg.InputTokens
				}
				for _, n := range []struct {
					flag string
					v    int
				}{{"rounds", shared.Rounds}, {"round-requests", shared.Requests}, {"system-tokens", shared.SystemTokens}} {
					if n.v == 0 {
						return usagef("--%s 0: give at least 1", n.flag)
					}
				}
				if err := shared.Check(); err != nil {
					if out, ok := fielderr.Rename(err, sharedFlagOf); ok {
						return usageError(out)
					}
					return flagError(err)
				}
			}
			for _, n := range []struct {
				flag string
				v    int
			}{{"repeats", cfg.Repeats}, {"max-tokens", cfg.MaxTokens}, {"input-tokens", cfg.InputTokens}} {
				if n.v == 0 { // the library's 0 is its default, not what a typed 0 means
					return usagef("--%s 0: give at least 1", n.flag)
				}
			}
			// Every setting is checked before the simulator starts.
			if err := cfg.Check(); err != nil {
				return flagError(err)
			}
			f.s.Salt = "off"
			rc, err := f.config(nil, "")
			if err != nil {
				return err
			}
			rc.Tokenizer = cfg.Tokenizer
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f.cfg.URL == "" {
				p, err := sim.LookupProfile(profile)
				if err != nil {
					return flagError(usageError(err))
				}
				s, err := sim.New(sim.Config{Profile: p, Tokenizer: cfg.Tokenizer, DisablePrefixCache: noCache})
				if err != nil {
					return flagError(usageError(err))
				}
				if err := s.Start("127.0.0.1:0"); err != nil {
					return err
				}
				defer s.Close()
				rc.URL, rc.Simulated, rc.SimProfile = s.URL(), true, p.Name
				cache := "on"
				if noCache {
					cache = "off"
				}
				fmt.Fprintf(errw, "no --url: using llmreplay's SIMULATED server, profile %s, prefix cache %s\n", p.Name, cache)
			}
			rc.AnnounceAPI(errw)
			if mode == "shared-system" {
				shared.Replay = rc
				res, err := probe.SharedSystem(cmd.Context(), shared)
				var o probeOutcome
				if res != nil {
					o = probeOutcome{res.Summary, res.Render, res.Verdict}
				}
				return reportProbe(out, errw, o, err, rc.Trace,
					"requests after the first round missed the shared system prompt", "the rounds could not be judged: see the evidence")
			}
			cfg.Replay = rc
			res, err := probe.PrefixCache(cmd.Context(), cfg)
			var o probeOutcome
			if res != nil {
				o = probeOutcome{res.Summary, res.Render, res.Verdict}
			}
			return reportProbe(out, errw, o, err, rc.Trace,
				"the prefix cache did not behave: a step failed", "a step could not be judged: see its evidence")
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.cfg.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url")
	fs.BoolVar(&noCache, "no-prefix-cache", false, "the built-in simulator without its prefix cache (to see the probe fail)")
	fs.StringVar(&mode, "mode", "repeat", "repeat (new, same, different, first again) or shared-system (rounds sharing a system prompt)")
	fs.IntVar(&shared.SystemTokens, "system-tokens", probe.DefaultSystemTokens, "shared-system: the shared system prompt's exact length in tokens")
	fs.IntVar(&shared.Rounds, "rounds", probe.DefaultRounds, "shared-system: rounds (the first is the cold one)")
	fs.IntVar(&shared.Requests, "round-requests", probe.DefaultRoundRequests, "shared-system: requests per round, sent together")
	fs.IntVar(&cfg.InputTokens, "input-tokens", probe.DefaultInputTokens, "exact prompt length in tokens (shared-system: the user message, default 64)")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&cfg.Repeats, "repeats", probe.DefaultRepeats, "prompts per step (6 or more give a TTFT verdict)")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base or a tokenizer.json path")
	fs.StringVar(&shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed for the prompts")
	return cmd
}

// sharedFlagOf names the flags that set probe.SharedConfig's fields.
var sharedFlagOf = map[string]string{"Rounds": "--rounds", "Requests": "--round-requests", "SystemTokens": "--system-tokens",
	"UserTokens": "--input-tokens", "MaxTokens": "--max-tokens"}

// probeOutcome is what every probe mode hands back to be reported the same way.
type probeOutcome struct {
	summary *replay.Summary // nil when the run never started
	render  func(io.Writer) error
	verdict string
}

// reportProbe prints a probe's run summary and table, names its trace, and
// turns its verdict into the exit status; err is the probe's own error, after
// which only the summary of what was sent is printed.
func reportProbe(out, errw io.Writer, o probeOutcome, err error, trace, fail, unsure string) error {
	if o.summary != nil {
		fmt.Fprintln(errw, o.summary)
	}
	if err != nil {
		return flagError(err)
	}
	if err := o.render(out); err != nil {
		return err
	}
	if trace != "" {
		fmt.Fprintf(errw, "trace: %s\n", trace)
	}
	return verdictExit(o.verdict, fail, unsure)
}

// verdictExit is a probe's exit status: 0 PASS, 1 FAIL, 3 UNSURE.
func verdictExit(v, fail, unsure string) error {
	switch v {
	case "FAIL":
		return &exitError{code: 1, err: fmt.Errorf("%s", fail)}
	case "UNSURE":
		return &exitError{code: 3, err: fmt.Errorf("%s", unsure)}
	}
	return nil
}
