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
	return Split().Total()
}

// Split is Process in its two parts: the time the process's threads ran
// its own code (user) and the time the kernel ran on its behalf (system:
// its system calls, its page faults, and the network work the kernel did
// in its context, such as a loopback peer's segments queued while it held
// the socket). Zero if the system cannot say.
func Split() Usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	return Usage{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano())}
}
