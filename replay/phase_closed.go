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
	pool(ph.Concurrency, len(rs), func(i int) {
		if ctx.Err() != nil {
			e.mu.Lock()
			e.sum.NotSent++
			e.mu.Unlock()
			return
		}
		p := e.prepare(rs[i], false)
		e.inflight.Add(1)
		e.do(p, e.now())
	})
}

// pool runs do(0) … do(n−1) on c workers (at least one, and never more
// than n: workers past the items would have nothing to do), each taking
// the next item as soon as its previous one is done.
func pool(c, n int, do func(i int)) {
	c = max(min(c, n), 1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
}
