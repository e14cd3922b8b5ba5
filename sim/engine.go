package sim

import (
	"sync/atomic"
	"time"
)

// stream is how the scheduler hands tokens to one HTTP writer without ever
// blocking on it: it publishes the running token count and pokes a
// one-slot channel, so a slow client costs nothing but its own lateness.
type stream struct {
	avail  atomic.Int64 // tokens generated so far
	cached atomic.Int64 // prompt tokens served from the prefix cache
	notify chan struct{}
	gone   atomic.Bool // the client went away or the writer gave up

	first, last atomic.Int64 // unix ns of the first and last token's step end
	// queued is when the request reached the engine (unix ns), set before
	// submit hands the stream over: the start of the server-side TTFT.
	queued int64
}

func newStream() *stream { return &stream{notify: make(chan struct{}, 1)} }

func (st *stream) poke() {
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// engine drives a core in real time: one goroutine plans each step, waits
// for the step's absolute deadline and then publishes its tokens. Deadlines
// are absolute (previous deadline + step time), so timer lateness on one
// step is absorbed by the next instead of accumulating.
type engine struct {
	core    *core
	arrive  chan *seq
	quit    chan struct{}
	done    chan struct{}
	metrics *metrics

	// late sums how far past their deadlines steps really ended: the
	// engine's own measure of CPU starvation, which tests use to tell a
	// miscalibration from a machine too busy to keep time.
	late atomic.Int64

	// firstArrive and lastArrive are the earliest and latest nominal
	// arrival (ns) of any request: a burst meant to be released together
	// whose arrivals spread past BatchWindow did not start in one step,
	// which tests must tell from a miscalibration.
	firstArrive, lastArrive atomic.Int64
}

// maxLag bounds how far behind its deadlines the scheduler may run before
// it gives up catching up (after a stop-the-world pause, say), so a hiccup
// never turns into a burst of back-to-back steps.
const maxLag = 250 * time.Millisecond

func newEngine(p Profile, cacheOn bool, m *metrics) *engine {
	e := &engine{
		core:    newCore(p, cacheOn),
		arrive:  make(chan *seq, 1024),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		metrics: m,
	}
	if m != nil {
		e.core.onAdmit = func(prompt, hit int) {
			m.cacheQueries.Add(float64(prompt))
			m.cacheHits.Add(float64(hit))
		}
	}
	go e.run()
	return e
}

func (e *engine) submit(s *seq) bool {
	select {
	case e.arrive <- s:
		return true
	case <-e.quit:
		return false
	}
}

func (e *engine) stop() {
	close(e.quit)
	<-e.done
}

func (e *engine) run() {
	defer close(e.done)
	var deadline time.Time // the nominal end of the last step
	idle := true
	var pending []*seq // submitted, not yet due at the engine (arrive in the future)
	take := func(s *seq) {
		if f := e.firstArrive.Load(); f == 0 || s.arrive < f {
			e.firstArrive.Store(s.arrive)
		}
		if s.arrive > e.lastArrive.Load() {
			e.lastArrive.Store(s.arrive)
		}
		// Arrivals come nearly in order; keep pending sorted by arrive.
		i := len(pending)
		for i > 0 && pending[i-1].arrive > s.arrive {
			i--
		}
		pending = append(pending, nil)
		copy(pending[i+1:], pending[i:])
		pending[i] = s
	}
	gone := func(s *seq) bool { return s.out.gone.Load() }
	for {
		// Everything submitted during the last step.
	drain:
		for {
			select {
			case s := <-e.arrive:
				take(s)
			default:
				break drain
			}
		}
		var start time.Time // the step's nominal start
		if idle {
			if len(pending) == 0 {
				select {
				case s := <-e.arrive:
					take(s)
				case <-e.quit:
					return
				}
			}
			// An idle engine starts BatchWindow after the first request
			// arrives, counted from its nominal arrival (the handler's
			// receipt plus Overhead), not from when this goroutine got to
			// run: the scheduler's lateness must not lengthen latencies.
			a := time.Unix(0, pending[0].arrive)
			if now := time.Now(); now.Sub(a) > maxLag {
				a = now
			}
			start = a.Add(e.core.p.BatchWindow)
			if !e.sleepUntil(start) {
				return
			}
		wake:
			for {
				select {
				case s := <-e.arrive:
					take(s)
				default:
					break wake
				}
			}
		} else {
			start = deadline
			if now := time.Now(); now.Sub(start) > maxLag {
				start = now
			}
		}
		// A request joins the first step that starts after it arrived.
		due := 0
		for due < len(pending) && pending[due].arrive <= start.UnixNano() {
			e.core.enqueue(pending[due])
			pending[due] = nil
			due++
		}
		pending = pending[due:]
		e.core.drop(gone)
		d, em, ok := e.core.step()
		e.publishGauges()
		if !ok {
			idle = true
			continue
		}
		idle = false
		deadline = start.Add(d)
		if !e.sleepUntil(deadline) {
			return
		}
		tnow := time.Now()
		if l := tnow.Sub(deadline); l > time.Millisecond {
			e.late.Add(int64(l))
		}
		// Count before waking the streams: a client that has read its last
		// token and then asks /metrics must see that token counted.
		if e.metrics != nil {
			e.metrics.generated.Add(float64(len(em)))
		}
		t := tnow.UnixNano()
		for _, s := range em {
			st := s.out
			if s.produced == 1 {
				st.cached.Store(int64(s.cachedTokens))
				st.first.Store(t)
				if e.metrics != nil && st.queued != 0 {
					e.metrics.ttft.Observe(float64(t-st.queued) / 1e9)
				}
			}
			st.last.Store(t)
			st.avail.Store(int64(s.produced))
			st.poke()
		}
	}
}

// sleepUntil waits for t on a high-resolution kernel timer (sleepPrecise)
// in slices short enough to notice a stop; false means stopped. Go's own
// timers wake up to a millisecond late (the runtime waits in epoll with
// a millisecond timeout), which at a time scale of 0.1 is 10 ms of the
// profile's time added to every idle start and every request's Overhead.
func (e *engine) sleepUntil(t time.Time) bool {
	for {
		select {
		case <-e.quit:
			return false
		default:
		}
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		sleepPrecise(min(d, 20*time.Millisecond))
	}
}

func (e *engine) publishGauges() {
	m := e.metrics
	if m == nil {
		return
	}
	m.running.Set(float64(e.core.running()))
	m.waiting.Set(float64(len(e.core.waiting)))
	if kv := e.core.p.KVBlocks; kv > 0 {
		m.kvUsage.Set(min(1, float64(e.core.kvBlocks())/float64(kv)))
	}
}
