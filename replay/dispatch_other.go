//go:build !linux

package replay

import "time"

// newWaiter: elsewhere the thread sleep is Go's own timer, which wakes
// about a millisecond late, so the last 1.5 ms are spun, yielding.
func (e *engine) newWaiter() *waiter {
	return &waiter{
		now: e.now,
		sleep: func(until int64) {
			time.Sleep(time.Duration(until - e.now()))
		},
		chunk:   int64(threadChunk),
		spinMin: int64(1500 * time.Microsecond),
		spinMax: int64(1500 * time.Microsecond),
		fixed:   true,
		yield:   true,
	}
}

// holdP: elsewhere the sleep is Go's timer, which gives the P up.
func holdP(w *waiter) {}
