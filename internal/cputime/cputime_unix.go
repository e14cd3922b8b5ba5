//go:build unix

// Package cputime reads the process's CPU time. On a shared machine the
// CPU time a piece of work used, not the wall clock, says what it costs:
// benchmarks and the selftest harness report it beside wall-clock figures.
package cputime

import (
	"syscall"
	"time"
)

// Process is the user+system CPU time this process has used so far
// (getrusage RUSAGE_SELF), or 0 if the system cannot say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
