package main

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/bench"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

// capacityFlagOf names the flags that set live.Settings' fields flagOf
// does not name.
var capacityFlagOf = map[string]string{"Axis": "--axis", "Range": "--range", "Resolution": "--resolution", "MaxRequests": "--max-requests",
	"MaxDuration": "--max-duration", "GoodputBounds": "--goodput-bounds", "RoundDuration": "--round-duration", "Results": "--results",
	"Out": "-o", "Report": "--report", "Force": "--force"}

func newCapacityCmd() *cobra.Command {
	var f replayFlags
	var s live.Settings
	cmd := &cobra.Command{
		Use:   "capacity --slo SLO [--url URL] [flags]",
		Short: "How much load a server takes while an SLO holds: the largest concurrency (or request rate) meeting it, with its interval",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("profile") {
				s.Profile = "" // the default, which a --url run leaves alone
			}
			if !cmd.Flags().Changed("goodput-bounds") {
				s.GoodputBounds = "" // the default, or with --from the trace's own
			}
			if s.From != "" {
				return reanalyseCapacity(cmd, s)
			}
			s.URL = f.Config.URL
			return runCapacity(cmd, &f, s)
		},
	}
	f.register(cmd, replay.DefaultAPI)
	fs := cmd.Flags()
	fs.StringVar(&s.SLO, "slo", "", "the SLO the load must meet: percentile bounds of ttft, tpot, e2e and/or a goodput share, e.g. 'ttft_p90<=1s,tpot_p90<=50ms' or 'goodput>=95%'")
	fs.StringVar(&s.Axis, "axis", live.AxisConcurrency, "load axis: concurrency (closed-loop users) or rate (open-loop requests/s)")
	fs.StringVar(&s.Range, "range", "", "LOW:HIGH levels the search may probe (default 1:64 users, or 0.5:32 requests/s on the rate axis)")
	fs.Float64Var(&s.Resolution, "resolution", 0, "stop when the boundary is bracketed this narrowly (default 1 user, or 0.25 requests/s)")
	fs.IntVar(&s.MaxRequests, "max-requests", 0, "budget: stop before the search sends more requests than this (0: no limit)")
	fs.DurationVar(&s.MaxDuration, "max-duration", 0, "budget: start no probe round after the search has run this long (0: no limit)")
	fs.StringVar(&s.GoodputBounds, "goodput-bounds", analyze.DefaultSLO.String(), "per-request bounds a goodput>=P% term counts requests against (ttft=, tpot=, e2e=)")
	fs.StringVar(&s.Report, "report", "", "also write an HTML report of the trace to this file, with the SLO's curve over the probed levels, its bound and the answer")
	fs.DurationVar(&s.RoundDuration, "round-duration", live.DefaultRoundDuration, "rate axis: each probe round sends the rate times this many measured requests (at least 20) from an idle server; rounds are judged as independent draws, so a probe needs 8 of them (in the server's time: a --time-scale shortens it alike)")
	fs.Float64Var(&s.TimeScale, "time-scale", 1, "built-in simulator only: run the profile this many times faster-paced (0.1: every latency ×0.1), with the SLO bounds scaled alike")
	fs.StringVar(&f.Config.URL, "url", "", "server base address; empty: the built-in simulator")
	fs.StringVar(&s.Profile, "profile", bench.DefaultProfile, "simulator profile when no --url ("+strings.Join(sim.ProfileNames(), ", ")+")")
	fs.IntVar(&s.InputTokens, "input-tokens", 800, "exact prompt length in tokens")
	fs.IntVar(&s.MaxTokens, "max-tokens", 256, "output tokens per request")
	fs.StringVar(&s.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar(&s.Shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.StringVar(&s.Results, "results", bench.DefaultResults, "folder for the trace")
	fs.StringVarP(&s.Out, "out", "o", "", "trace path (default: under --results, named by label and time)")
	fs.StringVar(&s.From, "from", "", "answer again from a capacity trace (for --slo, default its own), sending nothing")
	fs.StringVar(&s.Resume, "resume", "", "continue the search a stopped run recorded in this capacity trace (same flags as that run); the trace grows in place")
	fs.BoolVar(&s.Force, "force", false, "replace the -o trace or the --report file if it exists (never an input)")
	return cmd
}

// runCapacity runs the search s states (capacity, bench --find-capacity)
// with f's endpoint and prints its answer.
func runCapacity(cmd *cobra.Command, f *replayFlags, s live.Settings) error {
	lc, err := s.Config()
	if err != nil {
		return cli.Usage(flagErrorIn(err, capacityFlagOf))
	}
	rc, err := f.config(nil, "")
	if err != nil {
		return err
	}
	rc.Tokenizer = s.Tokenizer
	release, err := s.Claim(&lc, rc, time.Now())
	if err != nil {
		return flagErrorIn(err, capacityFlagOf)
	}
	defer release()
	if _, err := lc.Resolve(); err != nil {
		return cli.Usage(err)
	}
	lc.Announce(cmd.ErrOrStderr(), f.quiet)
	res, err := live.Run(cmd.Context(), lc)
	stopped := cmd.Context().Err() != nil
	switch {
	case res == nil && err != nil && s.Resume != "" && strings.HasPrefix(err.Error(), "--resume"):
		return cli.Usage(err)
	case res == nil && err != nil:
		return usageErrorIfInput(flagError(err))
	case res == nil:
		return nil
	case err != nil && !res.Written() && !stopped:
		// Nothing measured (the server was not reached, say): no table
		// and no file to point at, and the error in the flags' words.
		return flagError(err)
	}
	if rerr := res.WriteAll(cmd.OutOrStdout(), cmd.ErrOrStderr(), s.Report); rerr != nil {
		return rerr
	}
	end := res.Ended(err, stopped)
	if st := live.Stopped(""); errors.As(end, &st) {
		return cli.Exit(130, end)
	}
	return end
}

// reanalyseCapacity is 'capacity --from TRACE': the answer again, for
// --slo (default the trace's own), nothing sent.
func reanalyseCapacity(cmd *cobra.Command, s live.Settings) error {
	slo, good, err := s.SLOs()
	if err != nil {
		return cli.Usage(flagErrorIn(err, capacityFlagOf))
	}
	for _, name := range []string{"url", "axis", "range", "resolution", "max-requests", "max-duration", "time-scale", "profile", "out", "resume"} {
		if cmd.Flags().Changed(name) {
			return cli.Usagef("--%s does not apply with --from: the trace holds what the search ran", name)
		}
	}
	r, err := s.Answer(slo, good)
	if err != nil {
		return cli.Usage(flagErrorIn(err, capacityFlagOf))
	}
	if err := r.WriteAll(cmd.OutOrStdout(), cmd.ErrOrStderr(), s.From, slo, s.Report); err != nil {
		return err
	}
	return r.Result.Undetermined()
}
