package replay

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/llmreplay/llmreplay/workload"
)

// closedPhase runs the phase's Concurrency workers; each sends its next request as soon as its
// previous one ended. The scheduled time of a request is the moment its
// worker became free.
type closedPhase struct{}

func (closedPhase) run(ctx context.Context, e *engine, ph workload.Phase, rs []*workload.Request) {
	// Workers past the phase's requests would have nothing to send.
	c := max(min(ph.Concurrency, len(rs)), 1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rs) {
					return
				}
				if ctx.Err() != nil {
					e.mu.Lock()
					e.sum.NotSent++
					e.mu.Unlock()
					continue
				}
				p := e.prepare(rs[i], false)
				e.inflight.Add(1)
				e.do(p, e.now())
			}
		}()
	}
	wg.Wait()
}
