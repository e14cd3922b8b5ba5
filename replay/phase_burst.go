package replay

import (
	"context"
	"runtime"
	"sync"
	"time"

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
	var wg sync.WaitGroup
	rel := e.parkAtGate(rs, &wg, 0)
	if rel.allHeld() {
		// Written by the dispatch thread, whose raised priority keeps the
		// machine's other threads (the server's woken by each write
		// among them) from preempting it between two writes.
		e.onDispatchThread(func(bool) { rel.open(e.now()) })
	} else {
		// Released from this goroutine: a locked thread that yields
		// must have another thread woken to run the goroutines' sends
		// (a 32-request burst whose goroutines sent themselves spread
		// 0.9–3.6 ms from the SCHED_FIFO thread against 0.7–1.2 ms from
		// here, p50 over 3 bursts, interleaved on a loaded 2-core
		// machine).
		rel.open(e.now())
		runtime.Gosched()
	}
	wg.Wait()
}

// release is a gate that requests built ahead wait at, each in its own
// goroutine, to be sent together when it opens: by the release itself,
// one after another, where their connections kept their bytes
// (dispatch_held.go), else each by its goroutine.
type release struct {
	gate chan struct{}
	// sent is closed once the release has stamped every send and started
	// the timers: the requests' goroutines read their records after it.
	sent chan struct{}
	// at is the requests' scheduled time, set before the gate opens;
	// cancelled sends none of them.
	at        int64
	cancelled bool
	ps        []*prepared
	e         *engine
	// parked counts the goroutines not yet waiting at the gate, held
	// the held sends whose bytes are not all kept yet (startAtGate).
	parked, held sync.WaitGroup
}

// parkAtGate builds rs, starts a goroutine for each that waits at the
// gate (a held one after its round trip has reached its connection's
// write), and returns once all of them are waiting there, so that opening
// it leaves only the sends (wg counts the goroutines). by bounds the wait
// on the run clock (0: none): a request whose connection is still being
// set up then is sent when it is ready, stamped at the release.
func (e *engine) parkAtGate(rs []*workload.Request, wg *sync.WaitGroup, by int64) *release {
	r := e.startAtGate(rs, wg)
	// Done comes right before the receive; a goroutine between the two
	// is ready to run, not yet parked, and reaches the gate at its next
	// turn: a yield lets it.
	r.parked.Wait()
	all := make(chan struct{})
	go func() {
		r.held.Wait()
		close(all)
	}()
	if d := time.Duration(by - int64(goTimerLead) - e.now()); by > 0 && d > 0 {
		t := time.NewTimer(d)
		select {
		case <-all:
		case <-t.C:
		}
		t.Stop()
	} else if by == 0 {
		<-all
	}
	runtime.Gosched()
	return r
}

// startAtGate builds rs and starts a goroutine for each that waits at a
// new gate, a held one (--prewarm, plain HTTP) after its round trip has
// reached its connection's write. It returns at once: the release's
// parked and held count the goroutines not there yet.
func (e *engine) startAtGate(rs []*workload.Request, wg *sync.WaitGroup) *release {
	r := &release{gate: make(chan struct{}), sent: make(chan struct{}), e: e}
	for _, q := range rs {
		p := e.prepare(q, false)
		r.ps = append(r.ps, p)
		e.inflight.Add(1)
		wg.Add(1)
		// Only on connections opened beforehand (--prewarm): without,
		// a connection's set-up belongs in the request's time, and a
		// held round trip would open it before the release.
		if e.cfg.Prewarm && holdable(p) {
			r.held.Add(1)
			p.held = e.newHeld(p, r.gate, r.held.Done)
			go func() {
				defer wg.Done()
				e.doHeld(p, r)
			}()
			continue
		}
		r.parked.Add(1)
		go func() {
			defer wg.Done()
			r.parked.Done()
			<-r.gate
			if r.cancelled {
				p.cancel(errCancelled)
				e.inflight.Done()
				return
			}
			e.do(p, r.at)
		}()
	}
	return r
}

// open sends every request, scheduled at at: the held ones' bytes are
// written here, one after another, then the gate opens for the others. It
// reports whether it wrote every one itself (none is left to send itself).
func (r *release) open(at int64) bool {
	e := r.e
	r.at = at
	wrote := 0
	for _, p := range r.ps {
		if p.held != nil && e.writeHeld(p, at) {
			wrote++
		}
	}
	close(r.gate)
	for _, p := range r.ps {
		if p.held != nil {
			e.countSent(p.rec)
			e.startTimers(p)
		}
	}
	close(r.sent)
	e.mu.Lock()
	e.sum.ReleaseWrites += wrote
	e.mu.Unlock()
	return wrote == len(r.ps)
}

// allHeld says whether the release writes every request itself.
func (r *release) allHeld() bool {
	for _, p := range r.ps {
		if p.held == nil {
			return false
		}
	}
	return true
}

// cancel sends none of them and counts them not sent.
func (r *release) cancel() {
	r.e.mu.Lock()
	r.e.sum.NotSent += len(r.ps)
	r.e.mu.Unlock()
	r.cancelled = true
	for _, p := range r.ps {
		if p.held != nil {
			p.cancelHeld()
		}
	}
	close(r.gate)
}
