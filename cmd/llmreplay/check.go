package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
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
		tf          traceFlags
		claims      []string
		claimsFile  string
		minSamples  int
		acceptPoint bool
		acceptPart  bool
		format      string
	)
	cmd := &cobra.Command{
		Use:     "check TRACE...",
		Short:   "Check written speed claims against traces: holds, does not hold, or inconclusive",
		Long:    helpText("check"),
		Example: helpText("check.example"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := parseClaimFlags(claims, claimsFile)
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				return usagef("no claims: give --claim 'metric{key=value} >= N' or --claims FILE")
			}
			if minSamples < 1 {
				return usagef("--min-samples %d: give at least 1", minSamples)
			}
			if format != "text" && format != "json" {
				return usagef("unknown --format %q: use text or json", format)
			}
			res, err := tf.analyzeInputs(cmd, args)
			if err != nil {
				return err
			}
			// What limits the evidence itself is said before the verdicts.
			for _, w := range res.Warnings {
				if w.Code == analyze.WarnDuplicateTrace || w.Code == analyze.WarnTruncated || w.Code == analyze.WarnPartial {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w.Message)
				}
			}
			vs, fails, unsure := claim.CheckAll(res, cs, claim.CheckOptions{MinSamples: minSamples, AcceptPoint: acceptPoint, AcceptPartial: acceptPart})
			if format == "json" {
				if err := claim.WriteVerdictsJSON(cmd.OutOrStdout(), vs); err != nil {
					return err
				}
			} else if err := claim.RenderVerdicts(cmd.OutOrStdout(), vs); err != nil {
				return err
			}
			switch {
			case fails > 0:
				return &exitError{code: exitClaimFails, err: fmt.Errorf("%d of %d claims do not hold", fails, len(cs))}
			case unsure > 0:
				return &exitError{code: exitInconclusive, err: fmt.Errorf("%d of %d claims are inconclusive", unsure, len(cs))}
			}
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringArrayVar(&claims, "claim", nil, "a claim, e.g. 'per_stream_tps{concurrency=1} >= 490' (repeatable)")
	cmd.Flags().StringVar(&claimsFile, "claims", "", "a file of claims, one per line, # comments")
	cmd.Flags().IntVar(&minSamples, "min-samples", claim.MinSamples, "fewest samples behind a value for a verdict other than inconclusive (a median's 95% interval needs 6 however low this is, unless --accept-point)")
	cmd.Flags().BoolVar(&acceptPart, "accept-partial", false, "judge claims over traces that hold fewer requests than their run planned (stopped or cut off); otherwise they are at most inconclusive")
	cmd.Flags().BoolVar(&acceptPoint, "accept-point", false, "judge values with too few samples for a 95% interval (a few runs, as published figures are) on the value itself, given --min-samples of them (1 for a single run); the reason says so")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// parseClaimFlags reads --claim values and a --claims file (check, report).
func parseClaimFlags(claims []string, claimsFile string) ([]claim.Claim, error) {
	var cs []claim.Claim
	for _, s := range claims {
		c, err := claim.ParseClaim(s)
		if err != nil {
			return nil, claimError("", err)
		}
		cs = append(cs, c)
	}
	if claimsFile != "" {
		f, err := os.Open(claimsFile)
		if err != nil {
			return nil, usagef("--claims: %v", err)
		}
		more, err := claim.ParseClaims(f)
		f.Close()
		if err != nil {
			return nil, claimError(claimsFile, err)
		}
		cs = append(cs, more...)
	}
	return cs, nil
}
