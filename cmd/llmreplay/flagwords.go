package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

// The libraries word their errors for Go callers: an unknown metric is
// "analyze.Metric … see analyze.Metrics", a bad goodput bound is
// "analyze: Options.SLO …". These helpers say the same in the command
// line's words: the flag the user typed, the value, and where the names
// are. All are bad input (exit status 2).

// listMetrics is where a user finds the metric names.
const listMetrics = "run 'llmreplay analyze --list-metrics' for the names"

// unknownMetric rewords LookupMetric's unknown-metric error; ok is false
// for any other error.
func unknownMetric(err error) (problem string, ok bool) {
	if fe := fielderr.As(err); fe != nil && fe.Field == "Metric" {
		return "metric " + fe.Problem + ": " + listMetrics, true
	}
	return "", false
}

// metricFlagError is a metric name given to flag (analyze --metrics)
// that LookupMetric refused.
func metricFlagError(flag, value string, err error) error {
	if p, ok := unknownMetric(err); ok {
		return cli.Usagef("%s %q: %s", flag, value, p)
	}
	return cli.Usagef("%s %q: %v", flag, value, err)
}

// claimError is a claim that does not parse, named by where it came from:
// --claim's value, or the line of the --claims file.
func claimError(claimsFile string, err error) error {
	var pe *claim.ParseError
	if !errors.As(err, &pe) {
		if claimsFile != "" {
			return cli.Usagef("--claims %s: %v", claimsFile, err)
		}
		return cli.Usagef("--claim: %v", err)
	}
	problem := pe.Err.Error()
	if p, ok := unknownMetric(pe.Err); ok {
		problem = p
	}
	switch {
	case claimsFile != "" && pe.Text != "":
		return cli.Usagef("--claims %s, line %d: %q: %s", claimsFile, pe.Line, pe.Text, problem)
	case claimsFile != "":
		return cli.Usagef("--claims %s, line %d: %s", claimsFile, pe.Line, problem)
	case pe.Text == "":
		// Nothing before a # comment: the parser's "empty claim" would
		// only repeat it.
		return cli.Usagef("--claim is empty: write a claim such as 'per_stream_tps{concurrency=1} >= 490'")
	}
	return cli.Usagef("--claim %q: %s", pe.Text, problem)
}

// flagOf names the flag that sets each field of the libraries' configs:
// replay's and workload build's own tables (replay.FlagOf,
// workload.FlagOf), and the fields several other commands share. Their
// errors name the field, the command line names the flag. No field name
// means two things.
var flagOf = cli.Fields{
	"MergeLabels": "--merge-labels", // analyze.Options
	// bench.Config, sim, selftest
	"Concurrency": "--concurrency", "Profile": "--profile", "Dir": "--dir",
	// analyze.Options, trace.MergeOptions
	"SLO": "--slo", "Definitions": "--definitions", "AllowMissing": "--allow-missing", "AllowClock": "--allow-clock",
}.With(replay.FlagOf).With(workload.FlagOf)

// flagError turns a library's field error into the command line's words
// (exit status 2): the field becomes the flag that set it.
func flagError(err error) error { return flagErrorIn(err, nil) }

// flagErrorIn is flagError for a command whose settings' fields flagOf
// does not name, or names otherwise: names first, then flagOf.
func flagErrorIn(err error, names map[string]string) error {
	if p, ok := unknownMetric(err); ok {
		return cli.Usagef("%s", p)
	}
	return flagOf.With(names).Error(err)
}

// given says which of a command's settings the user typed: a field is
// given when the flag names (or flagOf) gives it was.
func given(cmd *cobra.Command, names map[string]string) fielderr.Given {
	return flagOf.With(names).Given(cmd.Flags())
}
