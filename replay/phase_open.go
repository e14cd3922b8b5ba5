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
// so none waits behind a busy one. The dispatcher prepares each instant of
// the schedule (one request, or a log's requests at one instant) ahead of
// its due time, between its sends: built, its goroutines started, and on a
// plain-HTTP run with --prewarm each request's round trip taken as far as
// its connection's write, which keeps the bytes (dispatch_held.go). At the
// due time it opens the instant's gate (release.open): it writes each held
// request's bytes itself, stamping the send right before the write, so
// what it does at a due time is one write system call per request, never
// a goroutine's scheduling or a request's building. A request whose bytes
// are not all held by then (a connection still being set up, a goroutine
// not yet run on a loaded machine) sends itself from its goroutine, stamped
// right before its own write, as a burst's does; so does each request over
// TLS or without --prewarm, stamped by its goroutine as before.
type openPhase struct{}

func (openPhase) run(ctx context.Context, e *engine, _ workload.Phase, rs []*workload.Request) {
	sorted := append([]*workload.Request(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	e.onDispatchThread(func(locked bool) { openLoop(ctx, e, sorted, locked) })
}

// How far ahead instants are prepared: from prepareLead before their due
// time, and no more than aheadMax instants (besides the next one, prepared
// however far off it is), so a long schedule never holds more than that
// many connections for requests not yet due (at 2,000 requests/s a lead of
// 10 ms is 20 requests; past 3,200/s the count bounds it). The lead covers
// the held round trip's way to its connection's write on a busy machine
// (its goroutine's start, an idle connection from the pool or a dial; at
// load 15 on 2 cores a lead of 5 ms left a third to half of a test's
// requests to send themselves):
// an instant not ready at its due time is sent all the same, by its
// requests' own goroutines. The dispatcher prepares them itself, at its
// raised priority: a goroutine of its own at the normal priority fell
// seconds behind a 2,000/s schedule on a loaded 2-core machine (load 8–14),
// and the dispatcher with it.
const (
	prepareLead = 10 * time.Millisecond
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
	if locked {
		// Locked at a raised priority: the thread's sleeps (from the
		// Go timer's lead on) hold its P (holdP), a P of its own (takeP).
		defer takeP()()
		holdP(w)
	}
	phaseStart := e.now()
	defer func() {
		e.mu.Lock()
		e.sum.Dispatch.add(w.stats)
		e.mu.Unlock()
	}()
	var wg sync.WaitGroup
	var ahead []due
	next := 0 // sorted[next:] are not prepared yet
	// prepare prepares the instants due by until, at most aheadMax, and
	// the next one in any case.
	prepare := func(until int64) {
		for next < len(sorted) && len(ahead) <= aheadMax {
			at := phaseStart + sorted[next].Offset
			if at > until && len(ahead) > 0 {
				return
			}
			j := next + 1
			for j < len(sorted) && sorted[j].Offset == sorted[next].Offset {
				j++
			}
			ahead = append(ahead, due{at: at, rel: e.startAtGate(sorted[next:j], &wg)})
			next = j
		}
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for next < len(sorted) || len(ahead) > 0 {
		if len(ahead) == 0 {
			// Not before the lead: a request prepared earlier would
			// hold its connection longer for nothing.
			if d := time.Duration(phaseStart + sorted[next].Offset - int64(prepareLead) - e.now()); d > 0 {
				t.Reset(d)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
			}
		}
		if ctx.Err() == nil {
			prepare(e.now() + int64(prepareLead))
		}
		if len(ahead) == 0 || !w.wait(ctx, ahead[0].at) {
			for _, d := range ahead {
				d.rel.cancel()
			}
			e.mu.Lock()
			e.sum.NotSent += len(sorted) - next
			e.mu.Unlock()
			break
		}
		d := ahead[0]
		ahead = ahead[1:]
		t0 := e.now()
		if !d.rel.open(d.at) {
			// A request sends itself: run its goroutine on this P now,
			// not once an idle P's thread has woken up to steal it.
			runtime.Gosched()
		}
		w.stats.Work += time.Duration(e.now() - t0)
	}
	wg.Wait()
}
