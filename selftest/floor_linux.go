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
// is the kernel's timer and the machine's CPU contention alone. The
// thread's timer slack is 1 ns, as the replay dispatcher's (the kernel's
// default of 50 µs would add up to that to every wake-up: on this project's
// 2-core machine the floor's p50 was 88 µs with it and 42 µs without), and
// is put back afterwards.
func wakeups(n int, interval time.Duration) ([]int64, string) {
	const method = "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on a locked thread, 1 ns timer slack"
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		defer unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
	}
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
