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
	gate := make(chan struct{})
	var release int64
	var wg sync.WaitGroup
	for _, r := range rs {
		p := e.prepare(r, false)
		e.inflight.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			e.do(p, release)
		}()
	}
	// Let the goroutines reach the gate before opening it.
	runtime.Gosched()
	release = e.now()
	close(gate)
	wg.Wait()
}
