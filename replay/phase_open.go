package replay

import (
	"context"
	"runtime"
	"sort"
	"sync"

	"github.com/llmreplay/llmreplay/workload"
)

// openPhase (rate and log replay) sends each request at phase start + its offset, whatever the
// server does: each request gets its own goroutine, so none waits behind a
// busy one. Each request is built before its deadline (prepare: body,
// headers, timers), so at the deadline only the send is left. Requests
// scheduled at the same instant (a log's burst) are all built, their
// goroutines started and parked at one gate before the deadline, and the
// gate opened once (release).
type openPhase struct{}

func (openPhase) run(ctx context.Context, e *engine, _ workload.Phase, rs []*workload.Request) {
	sorted := append([]*workload.Request(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	e.onDispatchThread(func(locked bool) { openLoop(ctx, e, sorted, locked) })
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
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].Offset == sorted[i].Offset {
			j++
		}
		deadline := phaseStart + sorted[i].Offset
		var rel *release
		var p *prepared
		if j-i > 1 {
			rel = e.parkAtGate(sorted[i:j], &wg, deadline)
		} else {
			p = e.prepare(sorted[i], false)
		}
		if !w.wait(ctx, deadline) {
			e.mu.Lock()
			e.sum.NotSent += len(sorted) - j
			e.mu.Unlock()
			if rel != nil {
				rel.cancel()
			} else {
				e.mu.Lock()
				e.sum.NotSent++
				e.mu.Unlock()
				p.cancel(errCancelled)
			}
			break
		}
		if rel != nil {
			rel.open(deadline)
		} else {
			e.inflight.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.do(p, deadline)
			}()
		}
		// Run the send on this P now, not after preparing the next request
		// or once an idle P's thread has woken up to steal it.
		runtime.Gosched()
		i = j
	}
	wg.Wait()
}
