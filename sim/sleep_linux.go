package sim

import (
	"syscall"
	"time"
)

// sleepPrecise blocks the calling thread for d on a high-resolution kernel
// timer (nanosleep: tens of microseconds of slack), resuming after
// signals (the runtime's preemption signals interrupt nanosleep).
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
