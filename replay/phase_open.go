package replay

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

// openPhase (rate and log replay) sends each request at phase start + its
// offset, whatever the server does: each request gets its own goroutine,
// so none waits behind a busy one. Each instant of the schedule (one
// request, or a log's requests at one instant) is prepared ahead of its
// due time by a goroutine of its own (prepareAhead): built, its goroutines
// started and waiting at a gate, and on a plain-HTTP run with --prewarm
// each request's round trip taken as far as its connection's write, which
// keeps the bytes (dispatch_held.go). At the due time the dispatcher opens
// the gate (release.open): it writes each held request's bytes itself,
// stamping the send right before the write, so what it does per request is
// one write system call, never a goroutine's scheduling or a request's
// building. A request whose bytes are not all held by then (TLS, no
// --prewarm, a connection still being set up) is stamped sent at the
// release and sends itself from its goroutine, as a burst's does.
type openPhase struct{}

func (openPhase) run(ctx context.Context, e *engine, _ workload.Phase, rs []*workload.Request) {
	sorted := append([]*workload.Request(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	e.onDispatchThread(func(locked bool) { openLoop(ctx, e, sorted, locked) })
}

// How far ahead instants are prepared: from prepareLead before their due
// time, and no more than aheadMax instants waiting for the dispatcher
// (plus the one it waits for and the one being prepared), so a long
// schedule never holds more than that many connections for requests not
// yet due (at 2,000 requests/s a lead of 5 ms is 10 requests; past 6,400/s
// the count bounds it). The lead covers a Go timer's late wake-up (about
// a millisecond, more on a busy machine) and the round trip's way to its
// connection (an idle one from the pool, or a dial, tens of µs on a LAN):
// an instant not ready at its due time is sent all the same, by its
// requests' own goroutines.
const (
	prepareLead = 5 * time.Millisecond
	aheadMax    = 32
)

// due is one instant of the schedule, prepared: its requests waiting at
// their release.
type due struct {
	at  int64 // on the run clock
	rel *release
}

// openLoop is the open-loop dispatcher. locked: it runs on a thread of its
// own at a raised priority (rtthread.go).
func openLoop(ctx context.Context, e *engine, sorted []*workload.Request, locked bool) {
	// One waiter for the phase: its spin window learns from every wake-up.
	// It parks on a Go timer until 2 ms before each deadline: a goroutine a
	// timer wakes is run next on its P, while one coming back from a
	// thread sleep without a P waits in the global run queue behind the
	// responses' goroutines (a thread sleep all the way was no better at
	// load 5–10, docs/PERFORMANCE.md). Unlocked, it spins yielding: a spin
	// that holds the P keeps the sends' and responses' goroutines off it
	// (on 2 Ps at load 17 that made the p50 lateness milliseconds).
	// Locked, it spins without yielding: a locked goroutine that yields
	// hands its P to another thread and must be handed one back, two
	// thread wake-ups per turn of the spin.
	w := e.newWaiter()
	w.yield = !locked
	w.coarse = int64(goTimerLead)
	phaseStart := e.now()
	defer func() {
		e.mu.Lock()
		e.sum.Dispatch.add(w.stats)
		e.mu.Unlock()
	}()
	var wg sync.WaitGroup
	ahead := make(chan due, aheadMax)
	go e.prepareAhead(ctx, sorted, phaseStart, ahead, &wg)
	for d := range ahead {
		if !w.wait(ctx, d.at) {
			d.rel.cancel()
			// The preparer sees ctx too, and closes ahead.
			for d := range ahead {
				d.rel.cancel()
			}
			break
		}
		if !d.rel.open(d.at) {
			// A request sends itself: run its goroutine on this P now,
			// not once an idle P's thread has woken up to steal it.
			runtime.Gosched()
		}
	}
	// ahead is closed: the preparer has added all it started to wg.
	wg.Wait()
}

// prepareAhead prepares the instants of sorted (due at start + their
// offsets) in order, each from prepareLead before it, and hands them to
// the dispatcher on ahead, which it closes when done. Requests it did not
// hand over because the run stopped are counted not sent.
func (e *engine) prepareAhead(ctx context.Context, sorted []*workload.Request, start int64, ahead chan<- due, wg *sync.WaitGroup) {
	defer close(ahead)
	notSent := func(n int) {
		e.mu.Lock()
		e.sum.NotSent += n
		e.mu.Unlock()
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].Offset == sorted[i].Offset {
			j++
		}
		at := start + sorted[i].Offset
		if d := time.Duration(at - int64(prepareLead) - e.now()); d > 0 {
			t.Reset(d)
			select {
			case <-ctx.Done():
				notSent(len(sorted) - i)
				return
			case <-t.C:
			}
		}
		// Built, its goroutines started, and waiting at its gate (the held
		// ones at their connections' writes) before it opens, or once its
		// deadline is a Go timer's lead away, whichever comes first.
		rel := e.parkAtGate(sorted[i:j], wg, at)
		select {
		case ahead <- due{at: at, rel: rel}:
		case <-ctx.Done():
			rel.cancel()
			notSent(len(sorted) - j)
			return
		}
		i = j
	}
}
