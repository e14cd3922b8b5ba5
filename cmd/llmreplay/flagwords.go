package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/internal/fielderr"
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

// flagOf names the flag that sets each field of the libraries' configs
// that replay, bench and workload build fill (replay.Config,
// workload.BuildConfig, bench.Config): their errors name the field, the
// command line names the flag. No field name means two things.
var flagOf = cli.Fields{
	"MergeLabels": "--merge-labels", // analyze.Options
	// replay.Config
	"Workload": "the workload file", "API": "--api", "URL": "--url", "Warmup": "--warmup", "Timeout": "--timeout",
	"IdleTimeout": "--idle-timeout", "ServerTokenize": "--server-tokenize", "Grace": "--grace", "Tokenizer": "--tokenizer", "SendTokenIDs": "--send-token-ids",
	"Model": "--model", "Label": "--label", "ServerCache": "--server-cache", "SessionHeader": "--session-header", "Timestamps": "--timestamps", "Headers": "--header", "ExtraBody": "--extra-body",
	"ServerMetrics": "--server-metrics", "ServerMetricsInterval": "--server-metrics-interval", "WatchPID": "--watch-pid",
	// workload.BuildConfig
	"Shape": "--shape", "InputTokens": "--input-tokens", "MaxTokens": "--max-tokens", "SaltWords": "--salt-words",
	"Repeats": "--repeats", "Requests": "--requests", "Duration": "--duration", "TimeScale": "--time-scale", "Arrival": "--arrival",
	"Window": "--window", "Prefix": "--prefix", "Schedule": "--schedule",
	"Turns": "--turns", "ThinkTime": "--think-time", "Sessions": "--sessions", "SystemTokens": "--system-tokens",
	"OrphanTurns": "--orphan-turns",
	// bench.Config, sim, selftest
	"Concurrency": "--concurrency", "Profile": "--profile", "Dir": "--dir",
	// analyze.Options, trace.MergeOptions
	"SLO": "--slo", "Definitions": "--definitions", "AllowMissing": "--allow-missing", "AllowClock": "--allow-clock",
}

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
