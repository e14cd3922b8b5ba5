package replay

import (
	"sync/atomic"
	"time"
)

// idleTimer ends a request when no byte has come for d. A read only notes
// its time (touch: a clock reading and an atomic store); the timer, when
// it fires, looks at the latest read and waits again for what is left of
// d since it. Resetting a runtime timer on every read moved it in its
// heap once per chunk, for a timer that on a streaming response never
// fires; now it fires about once per d while a response lasts.
type idleTimer struct {
	t       *time.Timer
	d       int64
	last    atomic.Int64 // idleClock of the latest read
	stopped atomic.Bool
	fire    func()
	now     func() int64 // idleClock; a test's own
}

// idleEpoch is the origin of idleClock, a monotonic clock in ns.
var idleEpoch = time.Now()

func idleClock() int64 { return int64(time.Since(idleEpoch)) }

// newIdleTimer makes a stopped timer that calls fire once d passes
// without a read after start.
func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	it := &idleTimer{d: int64(d), fire: fire, now: idleClock}
	it.t = time.AfterFunc(time.Hour, it.check)
	it.t.Stop()
	return it
}

// start (re)starts the wait: d from now.
func (it *idleTimer) start() {
	it.stopped.Store(false)
	it.touch()
	it.t.Reset(time.Duration(it.d))
}

// touch notes a read.
func (it *idleTimer) touch() { it.last.Store(it.now()) }

// stop ends the wait for good (the request ended).
func (it *idleTimer) stop() {
	it.stopped.Store(true)
	it.t.Stop()
}

func (it *idleTimer) check() {
	if it.stopped.Load() {
		return
	}
	if left := it.d - (it.now() - it.last.Load()); left > 0 {
		it.t.Reset(time.Duration(left))
		return
	}
	it.fire()
}
