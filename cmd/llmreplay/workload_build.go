package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/workload"
)

func newWorkloadBuildCmd() *cobra.Command {
	var (
		out   string
		force bool
		cfg   workload.BuildConfig
	)
	cmd := &cobra.Command{
		Use:   "build -o FILE",
		Short: "Generate a workload file of tokenizer-exact prompts and an arrival schedule",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usagef("no output file: add -o NAME.workload.zst")
			}
			if err := outfile.CheckParent(out); err != nil {
				return cli.Usage(err)
			}
			if err := outfile.Check(out, force, cfg.Inputs()...); err != nil {
				return cli.Usage(err)
			}
			if err := cfg.Stated(given(cmd, nil)); err != nil {
				return flagError(err)
			}
			wl, err := workload.Build(cfg)
			if err != nil {
				return cli.Usage(flagError(err))
			}
			if err := workload.Create(out, wl); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s\n", out, wl.Describe())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "workload file to write (conventionally NAME.workload.zst)")
	f.BoolVar(&force, "force", false, "replace the output file if it exists")
	f.StringVar(&cfg.Tokenizer, "tokenizer", workload.DefaultTokenizer, "o200k_base, cl100k_base, the path of a Hugging Face tokenizer.json (.zst accepted), or a model id whose tokenizer.json is in the Hugging Face cache (Qwen/Qwen3-8B)")
	f.StringVar((*string)(&cfg.Shape), "shape", string(workload.ShapeChat), "chat (one user message) or completion (raw prompt)")
	f.IntSliceVar(&cfg.InputTokens, "input-tokens", []int{workload.DefaultInputTokens}, "exact prompt length in tokens; a list makes one phase set per length")
	f.IntVar(&cfg.MaxTokens, "max-tokens", workload.DefaultMaxTokens, "output tokens per request (the server is asked to ignore end-of-sequence)")
	f.StringVar(&cfg.Prefix, "prefix", workload.DefaultPrefix, "unique (no shared prefix past the salt), shared (identical prompts) or shared:K (first K tokens identical)")
	f.StringVar(&cfg.Schedule, "schedule", workload.DefaultSchedule, "burst:LEVELS, closed:LEVELS, rate:R (rate:R1,R2,… for a rate sweep) or trace:FILE")
	f.IntVar(&cfg.Repeats, "repeats", 0, "phases per level (default 6 for burst: the fewest whose median over runs has a 95% interval; 1 otherwise)")
	f.IntVar(&cfg.Requests, "requests", 0, "requests per phase for closed (default 4×C) and rate (default 100)")
	f.DurationVar(&cfg.Duration, "duration", 0, "rate phases: last this long (the arrivals before it) instead of --requests, e.g. 60s")
	f.StringVar(&cfg.Arrival, "arrival", "", "rate arrivals: poisson (default), constant or gamma:SHAPE")
	f.Int64Var(&cfg.Seed, "seed", 1, "seed for the prose, the salt and random arrivals")
	f.Float64Var(&cfg.TimeScale, "time-scale", workload.DefaultTimeScale, "trace: multiply the log's times by this (0.5 replays it twice as fast)")
	f.StringVar(&cfg.OrphanTurns, "orphan-turns", workload.OrphansError, "trace: a log's turn whose parent_chat_id is on no line: error (refuse the log) or first (start its session there, for a log cut from a longer one)")
	f.StringVar(&cfg.Window, "window", "", "trace: START:END seconds of the log to keep, counted from its first request (either may be empty); offsets then count from START")
	f.IntVar(&cfg.SaltWords, "salt-words", workload.DefaultSaltWords, "one-token words at the start of each prompt that the replay re-draws per run (0: none)")
	f.StringVar(&cfg.Turns, "turns", "", "make conversations: N turns per session, or LO..HI (uniform; LO:HI too); each turn resends the conversation so far with the answer received")
	f.StringVar(&cfg.ThinkTime, "think-time", "", "sessions: pause between a response's end and the next turn: DURATION, LO..HI (uniform; LO:HI too) or exp:MEAN (default 0)")
	f.IntVar(&cfg.Sessions, "sessions", 0, "sessions per phase for closed (default 4×C) and rate (default 100) schedules; a burst of C starts C sessions")
	f.IntVar(&cfg.SystemTokens, "system-tokens", 0, "a system prompt of exactly K tokens shared by every request (every session's first turn); 0: none")
	return cmd
}
