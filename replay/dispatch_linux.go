package replay

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
		now:  e.now,
		mono: off,
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

// holdP makes w's thread sleeps keep the goroutine's P (a raw system
// call, which the runtime does not see as one), for a goroutine locked
// to a thread of its own at a raised priority. A sleep that gives its P
// up must, when it ends, find an idle one or wait in the global run
// queue until a busy P reaches it and hands one back: behind the
// responses' goroutines at 2,000 req/s that was where the schedule's
// tail came from. Held, the thread wakes (first, at its priority) with
// its P and sends at once. The P it holds is one more than the run
// asked for (extraP), so the responses' goroutines keep as many.
//
// A held P cannot stop for the collector's stop-the-world phases until
// the sleep ends, so each held sleep is at most heldChunk: the most it
// adds to a pause. Call holdP on the locked thread: the timer slack is
// set once, for it.
func holdP(w *waiter) {
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	w.chunk = int64(heldChunk)
	w.sleep = func(until int64) {
		ts := unix.NsecToTimespec(until + w.mono)
		for {
			_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
			if e != unix.EINTR {
				return
			}
		}
	}
}

// heldChunk bounds one sleep that holds its P (holdP).
const heldChunk = 500 * time.Microsecond
