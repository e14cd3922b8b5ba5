package replay

import (
	"os"
	"runtime/debug"
	"sync"
)

// runGCPercent is the garbage collector's target during a run (Go's
// default is 100). A run's live heap is small (the responses in flight,
// the connections' buffers) and its allocation steady (each chunk's
// record), so at the default the collector ran every few megabytes and
// took 24–42% of the client's CPU at 256 streams (selftest's GC share).
// At 400 it runs a quarter as often, for a heap at most five times the
// live one instead of twice. A GOGC the user set is left alone.
const runGCPercent = 400

// gcRuns counts the runs in progress in this process (a library user's
// runs may overlap): the first raises the target, the last puts back the
// one it found.
var gcRuns struct {
	sync.Mutex
	n, old int
}

// raiseGC raises the collector's target for a run and returns what puts
// it back.
func raiseGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	gcRuns.Lock()
	defer gcRuns.Unlock()
	if gcRuns.n == 0 {
		gcRuns.old = debug.SetGCPercent(runGCPercent)
		if gcRuns.old < 0 || gcRuns.old > runGCPercent {
			debug.SetGCPercent(gcRuns.old) // off, or higher already
		}
	}
	gcRuns.n++
	return func() {
		gcRuns.Lock()
		defer gcRuns.Unlock()
		if gcRuns.n--; gcRuns.n == 0 {
			debug.SetGCPercent(gcRuns.old)
		}
	}
}
