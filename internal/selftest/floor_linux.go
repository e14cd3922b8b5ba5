package selftest

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// wakeups sleeps a locked OS thread with clock_nanosleep(CLOCK_MONOTONIC,
// TIMER_ABSTIME) to n deadlines interval apart and returns how late each
// wake-up was. Absolute deadlines keep one late wake-up from shifting the
// rest, and a thread of its own keeps Go's scheduler out of the figure: it
// is the kernel's timer and the machine's CPU contention alone.
func wakeups(n int, interval time.Duration) ([]int64, string) {
	const method = "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on a locked thread"
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
		return nil, method
	}
	next := now.Nano() + int64(interval)
	late := make([]int64, 0, n)
	for range n {
		ts := unix.NsecToTimespec(next)
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
		}
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
		late = append(late, max(0, now.Nano()-next))
		next += int64(interval)
	}
	return late, method
}
