package main

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/replay"
)

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
	s.RegisterFlags(fs)
	fs.StringVar(&f.Config.URL, "url", "", "server base address; empty: the built-in simulator")
	return cmd
}

// runCapacity runs the search s states (capacity, bench --find-capacity)
// with f's endpoint and prints its answer.
func runCapacity(cmd *cobra.Command, f *replayFlags, s live.Settings) error {
	lc, err := s.Config()
	if err != nil {
		return cli.Usage(flagErrorIn(err, live.FlagOf))
	}
	rc, err := f.config(nil, "")
	if err != nil {
		return err
	}
	rc.Tokenizer = s.Tokenizer
	release, err := s.Claim(&lc, rc, time.Now())
	if err != nil {
		return flagErrorIn(err, live.FlagOf)
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
		return cli.Usage(flagErrorIn(err, live.FlagOf))
	}
	for _, name := range []string{"url", "axis", "range", "resolution", "max-requests", "max-duration", "time-scale", "profile", "out", "resume"} {
		if cmd.Flags().Changed(name) {
			return cli.Usagef("--%s does not apply with --from: the trace holds what the search ran", name)
		}
	}
	r, err := s.Answer(slo, good)
	if err != nil {
		return cli.Usage(flagErrorIn(err, live.FlagOf))
	}
	if err := r.WriteAll(cmd.OutOrStdout(), cmd.ErrOrStderr(), s.From, slo, s.Report); err != nil {
		return err
	}
	return r.Result.Undetermined()
}
