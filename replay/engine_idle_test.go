package replay

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleTimerWaitsForWhatIsLeft: reads only note their time, and the
// timer, when it fires, ends the request only once d has passed since the
// latest of them, else waits again; stopped, it never ends it. On a clock
// of the test's own: the timer's firing is called by hand.
func TestIdleTimerWaitsForWhatIsLeft(t *testing.T) {
	const d = int64(time.Hour)
	var clock int64
	var fired atomic.Int64
	it := newIdleTimer(time.Duration(d), func() { fired.Add(1) })
	it.now = func() int64 { return clock }
	it.start()
	defer it.stop()
	clock += d / 2
	it.touch() // a read halfway
	clock += d/2 + 1
	it.check() // d after the start, d/2 after the read
	if fired.Load() != 0 {
		t.Fatal("the idle timer ended the request d after its start though a read came d/2 ago")
	}
	clock += d / 2
	it.check() // d after the read
	if fired.Load() != 1 {
		t.Fatalf("fired %d times d after the latest read, want once", fired.Load())
	}
	it.start()
	clock += 2 * d
	it.stop()
	it.check() // a firing that raced the stop
	if fired.Load() != 1 {
		t.Error("a stopped idle timer ended its request")
	}
}
