package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/internal/cli"
)

// Exit statuses of `check`: 0 when every claim holds, exitClaimFails when
// at least one does not hold, exitInconclusive when none fails but at
// least one cannot be decided; bad input is 2 like everywhere else.
const (
	exitClaimFails   = 1
	exitInconclusive = 3
)

func newCheckCmd() *cobra.Command {
	var (
		tf         traceFlags
		claims     []string
		claimsFile string
		o          claim.CheckOptions
		format     string
	)
	cmd := &cobra.Command{
		Use:   "check TRACE...",
		Short: "Check written speed claims against traces: holds, does not hold, or inconclusive",
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := parseClaimFlags(claims, claimsFile)
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				return cli.Usagef("no claims: give --claim 'metric{key=value} >= N' or --claims FILE")
			}
			if err := o.CheckStated(format); err != nil {
				return flagErrorIn(err, map[string]string{"MinSamples": "--min-samples", "Format": "--format"})
			}
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			// What limits the evidence itself is said before the verdicts.
			for _, w := range claim.EvidenceWarnings(res) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w.Message)
			}
			vs, fails, unsure := claim.CheckAll(res, cs, o)
			if err := claim.WriteVerdicts(cmd.OutOrStdout(), vs, format); err != nil {
				return err
			}
			switch {
			case fails > 0:
				return cli.Exit(exitClaimFails, fmt.Errorf("%d of %d claims do not hold", fails, len(cs)))
			case unsure > 0:
				return cli.Exit(exitInconclusive, fmt.Errorf("%d of %d claims are inconclusive", unsure, len(cs)))
			}
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "a claim, e.g. 'per_stream_tps{concurrency=1} >= 490' (repeatable)")
	cmd.Flags().StringVar(&claimsFile, "claims", "", "a file of claims, one per line, # comments")
	cmd.Flags().IntVar(&o.MinSamples, "min-samples", claim.MinSamples, "fewest samples behind a value for a verdict other than inconclusive (a median's 95% interval needs 6 however low this is, unless --accept-point)")
	cmd.Flags().BoolVar(&o.AcceptPartial, "accept-partial", false, "judge claims over traces that hold fewer requests than their run planned (stopped or cut off); otherwise they are at most inconclusive")
	cmd.Flags().BoolVar(&o.AcceptPoint, "accept-point", false, "judge values with too few samples for a 95% interval (a few runs, as published figures are) on the value itself, given --min-samples of them (1 for a single run); the reason says so")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// parseClaimFlags reads --claim values and a --claims file (check, report).
func parseClaimFlags(claims []string, claimsFile string) ([]claim.Claim, error) {
	cs, err := claim.Load(claims, claimsFile)
	var se *claim.SourceError
	switch {
	case !errors.As(err, &se):
		return cs, err
	case se.Open:
		return nil, cli.Usagef("--claims: %v", se.Err)
	}
	return nil, claimError(se.File, se.Err)
}
