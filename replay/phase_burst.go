package replay

import (
	"context"
	"runtime"
	"sync"

	"github.com/llmreplay/llmreplay/workload"
)

// burstPhase releases all requests together behind a gate (the seeds' barrier)
// and waits until all have finished.
type burstPhase struct{}

func (burstPhase) run(ctx context.Context, e *engine, _ workload.Phase, rs []*workload.Request) {
	if ctx.Err() != nil {
		e.mu.Lock()
		e.sum.NotSent += len(rs)
		e.mu.Unlock()
		return
	}
	// Released from this goroutine, not the dispatch thread: a release
	// has no deadline to keep, and a locked thread that yields must have
	// another thread woken to run the sends (a 32-request burst spread
	// 0.9–3.6 ms from the SCHED_FIFO thread against 0.7–1.2 ms from here,
	// p50 over 3 bursts, interleaved on a loaded 2-core machine).
	var wg sync.WaitGroup
	rel := e.parkAtGate(rs, &wg)
	rel.open(e.now())
	runtime.Gosched()
	wg.Wait()
}

// release is a gate that requests built ahead wait at, each in its own
// goroutine, to be sent together when it opens.
type release struct {
	gate chan struct{}
	// at is the requests' scheduled time, set before the gate opens;
	// cancelled sends none of them.
	at        int64
	cancelled bool
	ps        []*prepared
	e         *engine
}

// parkAtGate builds rs, starts a goroutine for each that waits at the
// gate, and returns once all of them are waiting there, so that opening
// it leaves only the sends (wg counts the goroutines).
func (e *engine) parkAtGate(rs []*workload.Request, wg *sync.WaitGroup) *release {
	r := &release{gate: make(chan struct{}), e: e}
	var parked sync.WaitGroup
	for _, q := range rs {
		p := e.prepare(q, false)
		r.ps = append(r.ps, p)
		e.inflight.Add(1)
		wg.Add(1)
		parked.Add(1)
		go func() {
			defer wg.Done()
			parked.Done()
			<-r.gate
			if r.cancelled {
				p.cancel(errCancelled)
				e.inflight.Done()
				return
			}
			e.do(p, r.at)
		}()
	}
	// Done comes right before the receive; a goroutine between the two
	// is ready to run, not yet parked, and reaches the gate at its next
	// turn: a yield lets it.
	parked.Wait()
	runtime.Gosched()
	return r
}

// open sends every request, scheduled at at.
func (r *release) open(at int64) {
	r.at = at
	close(r.gate)
}

// cancel sends none of them and counts them not sent.
func (r *release) cancel() {
	r.e.mu.Lock()
	r.e.sum.NotSent += len(r.ps)
	r.e.mu.Unlock()
	r.cancelled = true
	close(r.gate)
}
