//go:build !unix

// Package cputime reads the process's CPU time. On a shared machine the
// CPU time a piece of work used, not the wall clock, says what it costs.
package cputime

import "time"

// Process returns 0 where getrusage does not exist: callers then report
// wall-clock figures only.
func Process() time.Duration { return 0 }

// Split returns zeros where getrusage does not exist.
func Split() Usage { return Usage{} }
