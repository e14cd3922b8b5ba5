//go:build unix

package endpoint

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far: on a shared
// machine it, not the wall clock, says what an event costs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
