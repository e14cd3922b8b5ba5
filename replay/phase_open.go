package replay

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

// openPhase (rate and log replay) sends each request at phase start + its offset, whatever the
// server does: each request gets its own goroutine, so none waits behind a
// busy one.
type openPhase struct{}

func (openPhase) run(ctx context.Context, e *engine, _ workload.Phase, rs []*workload.Request) {
	sorted := append([]*workload.Request(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	phaseStart := e.now()
	var wg sync.WaitGroup
	for i, r := range sorted {
		p := e.prepare(r, false)
		deadline := phaseStart + r.Offset
		if !e.waitUntil(ctx, deadline) {
			e.mu.Lock()
			e.sum.NotSent += len(sorted) - i
			e.mu.Unlock()
			p.cancel(errCancelled)
			break
		}
		e.inflight.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.do(p, deadline)
		}()
		// Run the send on this P now, not after preparing the next request
		// or once an idle P's thread has woken up to steal it.
		runtime.Gosched()
	}
	wg.Wait()
}

// spinWindow is how long before a deadline the dispatcher stops sleeping on
// a Go timer: those wake about 1 ms late on Linux. Where sleepThread is
// precise, it sleeps most of the rest and spins only the last spinFine.
// Spinning the whole window cost 75% of a core at 500 requests/s on a
// 2-core machine that the server shares, and a spinning thread is the
// first the kernel preempts when the machine is busy. llmreplay selftest
// section 4, client CPU per request before → after: 839 → 300 µs at
// 500/s, 415 → 185 µs at 2,000/s, p50 lateness unchanged (3 µs).
const (
	spinWindow = 1500 * time.Microsecond
	spinFine   = 150 * time.Microsecond
)

// waitUntil blocks until the run clock reaches deadline. It returns false if
// ctx ended first.
func (e *engine) waitUntil(ctx context.Context, deadline int64) bool {
	if d := time.Duration(deadline-e.now()) - spinWindow; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	if threadSleep {
		if d := time.Duration(deadline-e.now()) - spinFine; d > 0 {
			sleepThread(d)
		}
	}
	for e.now() < deadline {
		if ctx.Err() != nil {
			return false
		}
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
