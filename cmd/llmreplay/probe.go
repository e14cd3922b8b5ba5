package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/bench"
	"github.com/llmreplay/llmreplay/probe"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

func newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Short experiments with a verdict: does the server's prefix cache work",
		Long: `Probes are short experiments against a server, each with a verdict.

  prefix-cache  new prompts (miss), the same again (hit), different ones (miss), the first once more (hit)`,
		Example: `  llmreplay probe prefix-cache --url http://127.0.0.1:8000`,
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
	)
	cmd := &cobra.Command{
		Use:   "prefix-cache [--url URL] [flags]",
		Short: "Test the server's prefix cache: a repeated prompt must hit it, a new one miss",
		Long: `prefix-cache sends, one request at a time, --repeats new prompts of
--input-tokens tokens (expected: miss), the same prompts again (hit),
--repeats different prompts (miss) and the first ones once more (hit), and
prints a step / expected / actual / status table.

Each request is judged by the server's own count of prompt tokens served from
its cache where the API reports one (OpenAI-style usage
prompt_tokens_details.cached_tokens as vLLM sends it, llama.cpp cache_n,
SGLang cached_tokens, Anthropic cache_read_input_tokens): a hit has at least
80% of its prompt from the cache, a miss at most 20% (prompts share a chat
template's few tokens). Where the API reports none, a step is judged by its
median TTFT and that median's 95% interval against the step before: a hit
must be faster than the miss before it with the intervals apart.

Prompts are sent verbatim (no salt) and, where the API has a per-request
cache switch (llama.cpp cache_prompt), with the cache asked on. Without --url
the probe runs against the built-in simulator (--profile; --no-prefix-cache
switches its cache off, to see the probe fail).

Exit status: 0 the cache behaved; 1 a step failed; 3 a step could not be
judged (UNSURE); 2 bad input.`,
		Example: `  # on the built-in simulator, with and without its prefix cache
  llmreplay probe prefix-cache
  llmreplay probe prefix-cache --no-prefix-cache

  # a real server
  llmreplay probe prefix-cache --url http://127.0.0.1:8000 --input-tokens 2048`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("salt") {
				return usagef("--salt: the probe sends its prompts verbatim (a salt would keep them from the cache): drop it")
			}
			if f.url != "" && (cmd.Flags().Changed("profile") || noCache) {
				return usagef("--profile and --no-prefix-cache apply to the built-in simulator only: drop them, or drop --url")
			}
			cfg.Shape = workload.Shape(shape)
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
			f.salt = "off"
			rc, err := f.config(nil, "")
			if err != nil {
				return err
			}
			rc.Tokenizer = cfg.Tokenizer
			out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f.url == "" {
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
			rc.OnAPI = announceAPI(errw)
			cfg.Replay = rc
			res, err := probe.PrefixCache(cmd.Context(), cfg)
			if err != nil {
				if res != nil && res.Summary != nil {
					fmt.Fprintln(errw, res.Summary)
				}
				return flagError(err)
			}
			fmt.Fprintln(errw, res.Summary)
			if err := res.Render(out); err != nil {
				return err
			}
			if rc.Trace != "" {
				fmt.Fprintf(errw, "trace: %s\n", rc.Trace)
			}
			switch res.Verdict {
			case "FAIL":
				return &exitError{code: 1, err: fmt.Errorf("the prefix cache did not behave: a step failed")}
			case "UNSURE":
				return &exitError{code: 3, err: fmt.Errorf("a step could not be judged: see its evidence")}
			}
			return nil
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&f.url, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&profile, "profile", bench.DefaultProfile, "simulator profile when no --url")
	fs.BoolVar(&noCache, "no-prefix-cache", false, "the built-in simulator without its prefix cache (to see the probe fail)")
	fs.IntVar(&cfg.InputTokens, "input-tokens", probe.DefaultInputTokens, "exact prompt length in tokens")
	fs.IntVar(&cfg.MaxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&cfg.Repeats, "repeats", probe.DefaultRepeats, "prompts per step (6 or more give a TTFT verdict)")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base or a tokenizer.json path")
	fs.StringVar(&shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed for the prompts")
	return cmd
}
