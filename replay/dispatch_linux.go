package replay

import "golang.org/x/sys/unix"

// newWaiter sleeps the thread with clock_nanosleep(CLOCK_MONOTONIC,
// TIMER_ABSTIME). The run clock is time.Since(e.start), which Go reads from
// CLOCK_MONOTONIC: the offset between the two is read once, with the two
// readings back to back (tens of ns apart), and does not drift.
//
// Each thread sleep first sets the thread's timer slack to 1 ns (the
// kernel's default of 50 µs would be added to every wake-up; prctl is one
// cheap system call). The goroutine is not locked to its thread: a locked
// goroutine that loses its P while asleep must have another thread hand
// one back and wake it, a kernel wake-up on every late send (at load 13–19
// the p50 lateness rose from 2–30 µs to 50–120 µs locked, and to 2 ms
// once). Should the goroutine move between the prctl and the sleep, that
// one sleep has the default slack, and the other thread keeps a 1 ns
// slack, which only makes its timed waits end when asked.
func (e *engine) newWaiter() *waiter {
	off := monoOffset(e.now)
	return &waiter{
		now: e.now,
		sleep: func(until int64) {
			unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
			ts := unix.NsecToTimespec(until + off)
			for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
			}
		},
		chunk:   int64(threadChunk),
		spinMin: int64(spinMin),
		spinMax: int64(spinMax),
	}
}

// monoOffset is CLOCK_MONOTONIC minus the run clock, from the closest of
// three tries (the one whose two run-clock readings were nearest).
func monoOffset(now func() int64) int64 {
	var off, best int64 = 0, -1
	for range 3 {
		var ts unix.Timespec
		a := now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			return off
		}
		b := now()
		if best < 0 || b-a < best {
			best, off = b-a, ts.Nano()-(a+(b-a)/2)
		}
	}
	return off
}
