package replay

import (
	"syscall"
	"time"
)

// threadSleep is true where sleepThread sleeps on a high-resolution kernel
// timer (nanosleep: about 50 µs of slack), unlike Go's timers, which wake
// up to 1 ms late because the runtime waits in epoll with a millisecond
// timeout.
const threadSleep = true

// sleepThread blocks the calling thread for d, resuming after signals
// (the runtime's preemption signals interrupt nanosleep).
func sleepThread(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
