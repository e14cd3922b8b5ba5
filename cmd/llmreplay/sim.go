package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/sim"
)

func newSimCmd() *cobra.Command {
	var (
		addr, profile string
		timeScale     float64
		list          bool
		cfg           sim.Config
	)
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve a simulated inference server (every API replay speaks) until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list {
				sim.WriteProfiles(cmd.OutOrStdout())
				return nil
			}
			s, err := sim.Prepare(cfg, addr, profile, timeScale)
			if err != nil {
				return flagErrorIn(cli.Usage(err), map[string]string{"Addr": "--addr"})
			}
			return s.Serve(cmd.Context(), addr, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&profile, "profile", sim.DefaultProfile, "engine profile (see --list)")
	f.BoolVar(&list, "list", false, "list the profiles with their parameters and exit")
	f.Float64Var(&timeScale, "time-scale", 1, "multiply every duration of the profile by this factor (0.1: ten times faster; compare against latency bounds scaled alike)")
	f.IntVar(&cfg.Slots, "slots", 0, "requests served at once, overriding the profile (like llama-server -np)")
	f.StringVar(&cfg.Tokenizer, "tokenizer", "o200k_base", "tokenizer for prompts and the answer: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	f.StringVar(&cfg.Model, "model", "", "model name to report (default: the profile name)")
	f.IntVar(&cfg.DefaultMaxTokens, "default-max-tokens", 256, "output tokens when a request sets no limit")
	f.BoolVar(&cfg.DisablePrefixCache, "no-prefix-cache", false, "prefill every prompt token, even of a repeated prompt")
	f.StringVar(&cfg.PoseAs, "identity", "", "answer the identity routes of one engine, for --api auto: "+strings.Join(sim.Identities, ", ")+" (default: a generic OpenAI-compatible server)")
	f.BoolVar(&cfg.SendTimes, "send-times", false, `test mode: every chunk carries "sim_sent_unix_ns", the server's send time`)
	f.Int64Var(&cfg.Seed, "seed", 1, "seed for --error-rate")
	f.IntVar(&cfg.ReasoningTokens, "reasoning-tokens", 0, "the first N tokens of every answer are reasoning, in the API's reasoning form (chat reasoning_content, Anthropic thinking, Responses reasoning, Ollama thinking)")
	f.DurationVar(&cfg.TokenInterval, "token-interval", 0, "pace every stream at one token per interval (e.g. 20ms), on top of the profile; with --profile fast, streams of a fixed, known speed")
	f.IntVar(&cfg.MaxContext, "max-context", 0, "fault: HTTP 400 for prompts longer than N tokens (0 = no limit)")
	f.BoolVar(&cfg.NoStream, "no-stream", false, "fault: send the whole answer as one chunk at the end")
	f.IntVar(&cfg.TokensPerChunk, "tokens-per-chunk", 1, "fault: K tokens per streamed chunk")
	f.BoolVar(&cfg.DropUsage, "drop-usage", false, "fault: omit usage, timings and eval counts")
	f.IntVar(&cfg.InflateUsage, "inflate-usage", 0, "fault: report N times the output tokens sent (the flag alone means 10)")
	f.Lookup("inflate-usage").NoOptDefVal = "10"
	f.IntVar(&cfg.StallAfter, "stall-after", 0, "fault: stop sending after N tokens and keep the connection open")
	f.IntVar(&cfg.ResetAfter, "reset-after", 0, "fault: reset the TCP connection after N tokens")
	f.Float64Var(&cfg.ErrorRate, "error-rate", 0, "fault: fraction of requests answered with HTTP 500 (seeded)")
	f.IntVar(&cfg.Overrun, "overrun", 0, "fault: ignore max_tokens and send K times as many tokens (at most 131072)")
	f.DurationVar(&cfg.QuadraticPrefill, "quadratic-prefill", 0, "fault: prefill time grows with input length²: each prompt token also costs this per earlier prompt token (e.g. 50ns: +1.6 s at 8,000 tokens); not with --profile fast")
	return cmd
}
