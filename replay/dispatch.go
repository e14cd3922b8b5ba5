package replay

import (
	"context"
	"runtime"
	"slices"
	"time"
)

// waiter waits for absolute deadlines on the run clock: the open-loop
// dispatcher's and a conversation's turns'. Deadlines are absolute so that
// one late wake-up never shifts the next one.
//
// A wait has up to three stages: a Go timer until coarse before the
// deadline (for waits many goroutines do at once, which must not each hold
// an OS thread), a sleep of the thread itself until the spin window, then
// a spin. On Linux the thread sleeps with clock_nanosleep(TIMER_ABSTIME)
// on CLOCK_MONOTONIC, the clock the run clock is read from, with a timer
// slack of 1 ns (dispatch_linux.go). Go's timers wake about 1 ms late and
// more on a busy machine: on an idle 2-core machine, time.Sleep to
// absolute deadlines was 0.71 ms late at p50 and 1.35 ms at p99, against
// 135 µs and 404 µs for clock_nanosleep.
//
// The spin window adapts to the machine: it is the recent wake-ups' p99
// lateness (the second latest of the last 128) plus spinMargin, at least
// spinMin; where that is past the cap, the p90's or the p50's (spin). The
// cap is spinMax (1 ms), and no more than half the time since the
// previous deadline unless that is below spinMin, so the spin takes at
// most half a core at any rate up to 10,000 requests/s (at 500
// requests/s, 1 ms of every 2; at 2,000/s, 250 µs of every 500).
// On a quiet machine the thread then wakes before the window and spins
// little; on a noisy one it spins longer. stats counts what each wait
// came to (DispatchStats), for the run's summary.
type waiter struct {
	now func() int64 // the run clock, ns
	// mono is CLOCK_MONOTONIC minus the run clock (Linux).
	mono int64
	// sleep blocks the thread until the run clock reaches until, or a
	// little later.
	sleep func(until int64)
	// coarse: how long before the deadline a Go timer hands over to the
	// thread sleep (0: no Go timer). chunk: the longest single thread
	// sleep, so a stopped run is noticed within it.
	coarse, chunk int64
	// spinMin, spinMax bound the spin window; fixed spins spinMin always.
	spinMin, spinMax int64
	fixed            bool
	// yield spins with runtime.Gosched, for a goroutine that must leave
	// its P to others while it spins.
	yield bool

	// late holds the lateness of the last len(late) sleeps that ended at
	// a spin window (ring, next index n%len).
	late [128]int64
	n    int
	// prev is the previous wait's deadline (0: none yet), which bounds
	// the next spin window to half the gap.
	prev  int64
	stats DispatchStats
}

// DispatchStats says where an open-loop dispatcher's waits ended, so a
// late send can be put down to a stage without timing anything else: a
// thread wake-up that came after its deadline (the spin window did not
// cover it), a wait begun already inside its spin window (the dispatcher
// came back late from the previous send, or a Go timer woke it late), or
// neither (then the lateness is in the spin or the hand-off to the send).
type DispatchStats struct {
	// Waits is the number of waits that reached their deadline.
	Waits int
	// WakePast counts thread wake-ups after their deadline; LateStart
	// waits that began inside their spin window (no thread sleep) though
	// their deadline came after the previous wait's; Together waits whose
	// deadline was not after the previous one's (requests scheduled at
	// the same instant, a log's equal offsets), which have no wait of
	// their own to begin late.
	WakePast, LateStart, Together int
	// Spin is the time spent spinning, from the end of the thread sleep
	// (or the wait's start) to the deadline: the spin's CPU is at most
	// this (it yields, so other goroutines use part of it). Window is the
	// largest spin window used.
	Spin, Window time.Duration
	// Work is the dispatcher's own time at its deadlines, summed: from
	// each wait's end to the end of that instant's sends (on a plain-HTTP
	// run with --prewarm, its writes; else opening a gate and yielding to
	// the goroutines behind it).
	Work time.Duration
}

func (s *DispatchStats) add(o DispatchStats) {
	s.Waits += o.Waits
	s.WakePast += o.WakePast
	s.LateStart += o.LateStart
	s.Together += o.Together
	s.Spin += o.Spin
	s.Work += o.Work
	s.Window = max(s.Window, o.Window)
}

const spinMargin = 50 * time.Microsecond

// spin is the spin window for deadline: the recent wake-ups' p99 lateness
// plus spinMargin, or where that is past the cap (spinMax, at most half
// the gap since the previous deadline) their p90, or their p50, the
// highest of these that fits (spinMin where none does). Spinning spinMax
// on a machine whose p99 wake-up is 25 ms late buys nothing at p99 and
// costs a tenth of a core at 500 requests/s (section 4 at load 10-15:
// 680-810 µs of client CPU per request against 500-580 µs).
func (w *waiter) spin(deadline int64) int64 {
	if w.fixed {
		return w.spinMin
	}
	n := min(w.n, len(w.late))
	if n == 0 {
		return w.spinMin
	}
	limit := w.spinMax
	if w.prev > 0 && deadline > w.prev {
		limit = min(limit, (deadline-w.prev)/2)
	}
	var s [len(waiter{}.late)]int64
	copy(s[:], w.late[:n])
	slices.Sort(s[:n])
	for _, q := range [...]float64{0.99, 0.90, 0.50} {
		// The lateness that the share q of the wake-ups did not pass.
		l := s[n-1-int(float64(n)*(1-q))] + int64(spinMargin)
		if l <= limit {
			return max(l, w.spinMin)
		}
	}
	return w.spinMin
}

// wait blocks until the run clock reaches deadline; false if ctx ended
// first.
func (w *waiter) wait(ctx context.Context, deadline int64) bool {
	if w.coarse > 0 {
		if d := time.Duration(deadline - w.coarse - w.now()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
	}
	win := w.spin(deadline)
	together := w.prev > 0 && deadline <= w.prev
	w.prev = deadline
	w.stats.Window = max(w.stats.Window, time.Duration(win))
	wake := deadline - win
	slept := false
	var t int64
	for {
		if ctx.Err() != nil {
			return false
		}
		t = w.now()
		if t >= wake {
			break
		}
		until := min(wake, t+w.chunk)
		w.sleep(until)
		slept = true
		t = w.now()
		// The last sleep, or one meant to end before the window that
		// overslept into it: a wake-up, as late as it came after its
		// own target.
		if until == wake || t >= wake {
			w.late[w.n%len(w.late)] = max(0, t-until)
			w.n++
			break
		}
	}
	w.stats.Waits++
	switch {
	case together:
		w.stats.Together++
	case !slept:
		w.stats.LateStart++
	case t > deadline:
		w.stats.WakePast++
	}
	// The spin is at most the window long (plus a late wake-up's share of
	// it): ctx is not looked at again until it ends.
	for w.now() < deadline {
		if w.yield {
			runtime.Gosched()
		}
	}
	w.stats.Spin += time.Duration(max(0, deadline-t))
	return ctx.Err() == nil
}

// Wait stages. threadChunk bounds one thread sleep, so a cancelled run is
// noticed within 20 ms (50 wake-ups a second while a log replay idles).
const (
	goTimerLead = 2 * time.Millisecond
	threadChunk = 20 * time.Millisecond
	spinMin     = 50 * time.Microsecond
	spinMax     = time.Millisecond
)

// waitUntil is a wait for a goroutine of which there may be many at once
// (a conversation's turn, a shard's start): a Go timer first, then the
// thread sleep and a yielding spin of a fixed onceSpin, since one such
// wait learns nothing from the others.
func (e *engine) waitUntil(ctx context.Context, deadline int64) bool {
	w := e.newWaiter()
	w.coarse = int64(goTimerLead)
	w.yield = true
	if w.spinMin < int64(onceSpin) {
		w.fixed, w.spinMin = true, int64(onceSpin)
	}
	return w.wait(ctx, deadline)
}

// onceSpin covers a thread wake-up up to its p90 on an idle 2-core
// machine (clock_nanosleep: p50 91–135 µs late, p99 0.4–1.4 ms).
const onceSpin = 300 * time.Microsecond
