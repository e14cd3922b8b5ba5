package replay

import (
	"context"
	"slices"
	"testing"
	"time"
)

// fakeClock is a run clock that moves only when asked: each reading
// advances it by 1 µs (so a spin ends), and a sleep ends at its target
// plus the next of late (0 when they run out).
type fakeClock struct {
	t       int64
	late    []int64
	sleeps  []int64 // the targets asked for, in order
	onSleep func()
}

func (c *fakeClock) now() int64 { c.t += int64(time.Microsecond); return c.t }

func (c *fakeClock) sleep(until int64) {
	c.sleeps = append(c.sleeps, until)
	var l int64
	if len(c.late) > 0 {
		l, c.late = c.late[0], c.late[1:]
	}
	c.t = max(c.t, until) + l
	if c.onSleep != nil {
		c.onSleep()
	}
}

func fakeWaiter(c *fakeClock) *waiter {
	return &waiter{now: c.now, sleep: c.sleep, chunk: int64(threadChunk),
		spinMin: int64(spinMin), spinMax: int64(spinMax)}
}

const ms = int64(time.Millisecond)
const us = int64(time.Microsecond)

// The thread sleeps to each deadline minus the spin window, computed from
// the deadline and never from the previous wake-up: a wake-up 1.5 ms late
// does not move the next target, and one past its whole deadline sends
// without sleeping.
func TestWaiterAbsoluteDeadlines(t *testing.T) {
	c := &fakeClock{late: []int64{10 * us, 1500 * us, 0, 5 * ms, 0}}
	w := fakeWaiter(c)
	w.fixed, w.spinMin = true, 100*us
	deadlines := []int64{10 * ms, 12 * ms, 14 * ms, 16 * ms, 18 * ms, 20 * ms}
	for _, d := range deadlines {
		if !w.wait(context.Background(), d) {
			t.Fatal("wait returned false without a cancel")
		}
		if c.t < d {
			t.Fatalf("wait for %d returned early at %d", d, c.t)
		}
	}
	// The 4th sleep (to 15.9 ms) ended 5 ms late, at 20.9 ms: the 5th
	// and 6th deadlines were past by then and had no sleep.
	want := []int64{10*ms - 100*us, 12*ms - 100*us, 14*ms - 100*us, 16*ms - 100*us}
	if !slices.Equal(c.sleeps, want) {
		t.Fatalf("sleep targets %v, want %v", c.sleeps, want)
	}
}

// A long wait sleeps in chunks, each ending at an absolute time no later
// than the wake point, the last exactly at it.
func TestWaiterChunks(t *testing.T) {
	c := &fakeClock{}
	w := fakeWaiter(c)
	w.fixed, w.spinMin = true, 100*us
	deadline := int64(time.Second)
	if !w.wait(context.Background(), deadline) {
		t.Fatal("wait returned false")
	}
	wake := deadline - 100*us
	if n := len(c.sleeps); n < 40 || n > 60 {
		t.Fatalf("%d sleeps for 1 s in chunks of %v, want about 50", n, threadChunk)
	}
	for i, s := range c.sleeps {
		if s > wake {
			t.Fatalf("sleep %d to %d, past the wake point %d", i, s, wake)
		}
		if i > 0 && s-c.sleeps[i-1] > int64(threadChunk)+10*us {
			t.Fatalf("sleep %d: %d after the previous, longer than a chunk", i, s-c.sleeps[i-1])
		}
	}
	if last := c.sleeps[len(c.sleeps)-1]; last != wake {
		t.Fatalf("last sleep to %d, want the wake point %d", last, wake)
	}
}

// A stopped run is noticed at the next chunk: the wait returns false and
// sleeps no more.
func TestWaiterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeClock{}
	c.onSleep = func() {
		if len(c.sleeps) == 3 {
			cancel()
		}
	}
	w := fakeWaiter(c)
	if w.wait(ctx, int64(10*time.Second)) {
		t.Fatal("wait returned true after the cancel")
	}
	if len(c.sleeps) != 3 {
		t.Fatalf("%d sleeps, want 3 (cancelled during the third)", len(c.sleeps))
	}
	if w.wait(ctx, 0) {
		t.Fatal("wait on a cancelled context returned true")
	}
}

// The spin window covers the recent wake-ups' p99 lateness (the second
// latest of the last 128) plus the margin; where that is past spinMax, the
// p90's, then the p50's; spinMin where none fits. Old wake-ups leave the
// window after 128 new ones.
func TestWaiterSpinAdapts(t *testing.T) {
	// Each lateness is measured 1 µs after the sleep (the fake clock's
	// reading).
	margin := int64(spinMargin) + us
	rep := func(n int, l int64) []int64 { return slices.Repeat([]int64{l}, n) }
	cases := []struct {
		name string
		late []int64
		want int64
	}{
		{"no history", nil, int64(spinMin)},
		{"one wake-up 300 µs late", []int64{300 * us}, 300*us + margin},
		{"p99 of two is the latest", []int64{300 * us, 200 * us}, 300*us + margin},
		{"wake-ups on time: the margin", rep(128, 0), margin},
		{"128 at 20 µs", rep(128, 20*us), 20*us + margin},
		{"p99 400 µs fits under spinMax", append(rep(126, 20*us), 400*us, 400*us), 400*us + margin},
		{"p99 5 ms does not: the p90", append(rep(126, 100*us), 5*ms, 5*ms), 100*us + margin},
		{"p90 does not either: the p50", append(rep(64, 100*us), rep(64, 5*ms)...), 100*us + margin},
		{"nothing fits: spinMin", rep(128, 5*ms), int64(spinMin)},
		{"old wake-ups leave the window", append(rep(128, 5*ms), rep(128, 30*us)...), 30*us + margin},
	}
	for _, tc := range cases {
		c := &fakeClock{}
		w := fakeWaiter(c)
		for _, l := range tc.late {
			c.late = []int64{l}
			w.wait(context.Background(), c.t+10*ms)
		}
		if got := w.spin(c.t + 10*ms); got != tc.want {
			t.Errorf("%s: spin %d µs, want %d µs", tc.name, got/us, tc.want/us)
		}
	}
}

// The spin window is no more than half the gap since the previous
// deadline, so the spin takes at most half a core at any rate: with
// wake-ups 300 µs late, a 2 ms gap spins 351 µs, a 400 µs gap only
// spinMin (no quantile fits under its 200 µs), and spinMax bounds it
// where the gap is long.
func TestWaiterSpinCap(t *testing.T) {
	margin := int64(spinMargin) + us
	cases := []struct {
		name      string
		late, gap int64
		want      int64
	}{
		{"2 ms gap", 300 * us, 2 * ms, 300*us + margin},
		{"400 µs gap", 300 * us, 400 * us, int64(spinMin)},
		{"10 ms gap, 2 ms wake-ups: spinMax bounds it", 2 * ms, 10 * ms, int64(spinMin)},
		{"10 ms gap, 900 µs wake-ups fit under spinMax", 900 * us, 10 * ms, 900*us + margin},
		{"a 1.2 ms gap halves the cap to 600 µs", 600 * us, 1200 * us, int64(spinMin)},
	}
	for _, tc := range cases {
		c := &fakeClock{}
		w := fakeWaiter(c)
		d := int64(0)
		for range 128 {
			d = c.t + 20*ms
			c.late = []int64{tc.late}
			w.wait(context.Background(), d)
		}
		if got := w.spin(d + tc.gap); got != tc.want {
			t.Errorf("%s: spin %d µs, want %d µs", tc.name, got/us, tc.want/us)
		}
	}
}

// The counters say where each wait ended: on time from its sleep (the spin
// to the deadline counted), a wake-up past its deadline, or a wait begun
// inside its window because the previous wake-up was that late.
func TestWaiterStats(t *testing.T) {
	c := &fakeClock{late: []int64{0, 150 * us, 5 * ms, 0}}
	w := fakeWaiter(c)
	w.fixed, w.spinMin = true, 100*us
	for _, d := range []int64{10 * ms, 12 * ms, 14 * ms, 16 * ms, 20 * ms} {
		if !w.wait(context.Background(), d) {
			t.Fatal("wait returned false without a cancel")
		}
	}
	// Sleeps to 9.9, 11.9 (+150 µs: past 12), 13.9 (+5 ms: past 14 and
	// the 15.9 wake point of 16), 19.9 ms. The on-time ones spin from 1 µs
	// after their wake point (the fake clock's reading) to the deadline.
	want := DispatchStats{Waits: 5, WakePast: 2, LateStart: 1, Spin: 2 * 99 * time.Microsecond, Window: 100 * time.Microsecond}
	if w.stats != want {
		t.Fatalf("stats %+v, want %+v", w.stats, want)
	}
	// A deadline equal to the previous one (requests at the same instant)
	// has no wait of its own: together, not begun late.
	if !w.wait(context.Background(), 20*ms) {
		t.Fatal("wait returned false without a cancel")
	}
	want.Waits, want.Together = 6, 1
	if w.stats != want {
		t.Fatalf("after a second wait to 20 ms: stats %+v, want %+v", w.stats, want)
	}
	var sum DispatchStats
	sum.add(w.stats)
	sum.add(DispatchStats{Waits: 1, Window: 300 * time.Microsecond})
	if sum.Waits != 7 || sum.Together != 1 || sum.Window != 300*time.Microsecond || sum.Spin != want.Spin {
		t.Fatalf("add: %+v", sum)
	}
}

// The dispatcher's wait allocates nothing: at 2,000 requests/s it runs
// between every two sends.
func TestWaiterAllocs(t *testing.T) {
	c := &fakeClock{}
	w := fakeWaiter(c)
	ctx := context.Background()
	if n := testing.AllocsPerRun(200, func() { w.wait(ctx, c.t+2*ms) }); n != 0 {
		t.Fatalf("%v allocations per wait, want 0", n)
	}
}

// On the real clock a wait never returns before its deadline, however
// busy the machine (how late it returns is the selftest's to measure).
func TestWaiterNeverEarly(t *testing.T) {
	e := &engine{start: time.Now()}
	w := e.newWaiter()
	w.yield = true
	for _, c := range []struct {
		name string
		wait func(context.Context, int64) bool
	}{{"wait", w.wait}, {"waitUntil", e.waitUntil}} {
		for i := range 20 {
			d := e.now() + int64(i)*100*us
			if !c.wait(context.Background(), d) {
				t.Fatalf("%s returned false", c.name)
			}
			if now := e.now(); now < d {
				t.Fatalf("%s %d returned %d ns early", c.name, i, d-now)
			}
		}
	}
}

// A sleep meant to end before the spin window (threadChunk at a time, so
// a stopped run is noticed) that oversleeps past the deadline is a
// wake-up past it, and its lateness after its own target is a sample of
// the machine's wake-ups; it once counted as a wait begun late, with no
// sample.
func TestWaiterChunkOversleep(t *testing.T) {
	c := &fakeClock{late: []int64{85 * ms}}
	w := fakeWaiter(c)
	w.fixed, w.spinMin = true, 100*us
	if !w.wait(context.Background(), 100*ms) {
		t.Fatal("wait returned false without a cancel")
	}
	// One sleep to 20 ms + 1 µs (a chunk), woken 85 ms late: past 100 (the
	// fake clock adds 1 µs a reading).
	if len(c.sleeps) != 1 || w.stats.WakePast != 1 || w.stats.LateStart != 0 || w.n != 1 || w.late[0] != 85*ms+us {
		t.Fatalf("sleeps %v, stats %+v, %d samples (first %d); want one sleep, a wake-up past the deadline, its 85 ms as a sample", c.sleeps, w.stats, w.n, w.late[0])
	}
}
