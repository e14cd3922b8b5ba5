package replay

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/llmreplay/llmreplay/workload"
)

// The scheduling policies the dispatcher's thread can get, best first
// (Summary.DispatchPolicy; the trace header's "dispatcher_policy" option).
const (
	PolicyFIFO   = "SCHED_FIFO"
	PolicyRR     = "SCHED_RR"
	PolicyNice   = "nice -20"
	PolicyNormal = "SCHED_OTHER"
)

// The dispatcher's thread. On a 2-core machine under load a sleeping
// thread of the normal policy wakes behind whatever the kernel runs
// there; a realtime one (SCHED_FIFO, else SCHED_RR) preempts every normal
// thread the moment its timer fires, and nice -20 at least wins most of
// the CFS share. The open-loop dispatcher (rate and log-replay phases)
// runs on an OS thread of its own (runtime.LockOSThread) that asks for
// the best policy the process is permitted, in that order, and keeps the
// first it gets; a refusal (no CAP_SYS_NICE, an RLIMIT_RTPRIO of 0, a
// container's limits) is no error: the next is tried, and the last resort
// is the normal policy, with the goroutine unlocked again.
//
// The trade: a locked goroutine that yields hands its P to another
// thread, which must be woken to run the send, and must be handed one
// back. That costs the median send tens of microseconds and saves the
// tail milliseconds: interleaved on a loaded 2-core machine (selftest
// --short --section 4), SCHED_FIFO's lateness at 500/s was p50 70 µs, p99
// 1.1–1.7 ms; the normal, unlocked path's p50 3 µs, p99 4.6–11 ms. At the
// normal policy the lock buys nothing, so the goroutine is unlocked
// (dispatch_linux.go). A burst whose requests its release writes itself
// is released on the thread too, with no yield between the writes
// (dispatch_held.go); one whose requests send themselves (TLS) from its
// phase's goroutine (phase_burst.go). The open-loop dispatcher's thread
// sleeps keep its P (holdP, dispatch_linux.go), a P of its own (takeP).
//
// A thread whose policy was raised never returns to Go's pool of threads:
// its goroutine ends locked, and the runtime ends the thread with it, so
// no other goroutine later runs at realtime priority.

// policyStep is one policy to try on a thread.
type policyStep struct {
	name string
	set  func(tid int) error
}

// choosePolicy tries the steps in order on thread tid and keeps the first
// the kernel permits; refused says why each one before it was not
// permitted ("" when the first was). PolicyNormal when none was.
func choosePolicy(tid int, steps []policyStep) (got, refused string) {
	var why []string
	for _, s := range steps {
		if err := s.set(tid); err != nil {
			why = append(why, s.name+": "+err.Error())
			continue
		}
		return s.name, strings.Join(why, "; ")
	}
	return PolicyNormal, strings.Join(why, "; ")
}

// dispatchThread runs the dispatchers' loops, one at a time, on a thread
// whose policy it chose when it started.
type dispatchThread struct {
	// Policy is what the thread got, Refused why the better ones were
	// not permitted.
	Policy, Refused string
	jobs            chan func()
	done            chan struct{}
}

// startDispatchThread starts the thread and tries steps on it (the
// platform's policySteps in a run; tests pass their own). tid names the
// calling thread to the kernel.
func startDispatchThread(steps []policyStep, tid func() int) *dispatchThread {
	d := &dispatchThread{jobs: make(chan func()), done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		d.Policy, d.Refused = choosePolicy(tid(), steps)
		if d.Policy == PolicyNormal {
			runtime.UnlockOSThread()
		}
		close(ready)
		for f := range d.jobs {
			f()
			d.done <- struct{}{}
		}
		// Locked (a raised policy): the runtime ends the thread here.
	}()
	<-ready
	return d
}

// locked says whether the loops run on a thread of their own.
func (d *dispatchThread) locked() bool { return d.Policy != PolicyNormal }

// run runs f on the thread and returns when it has.
func (d *dispatchThread) run(f func()) {
	d.jobs <- f
	<-d.done
}

// stop ends the thread.
func (d *dispatchThread) stop() { close(d.jobs) }

// onDispatchThread runs a dispatcher's loop f on the run's dispatch
// thread (its argument: whether that thread is locked), or on the
// calling goroutine when the run has none.
func (e *engine) onDispatchThread(f func(locked bool)) {
	d := e.disp
	if d == nil {
		f(false)
		return
	}
	d.run(func() { f(d.locked()) })
}

// needsDispatcher says whether a workload has a phase the dispatch thread
// serves: a rate, log-replay or burst phase without conversations (a
// burst's release writes its requests there, dispatch_held.go).
func needsDispatcher(wl *workload.Workload) bool {
	for _, ph := range wl.Header.Phases {
		if k := phaseKindOf(ph.Kind); ph.Sessions == 0 && (k == (openPhase{}) || k == (burstPhase{})) {
			return true
		}
	}
	return false
}

// SetThreadPolicy gives the calling thread the named policy (PolicyFIFO,
// PolicyRR or PolicyNice), as the dispatcher's thread asks for it, for a
// measurement that must run as the dispatcher would (selftest's wake-up
// floor). The caller locks its goroutine to the thread and lets the
// thread end with it (rtthread.go says why).
func SetThreadPolicy(policy string) error {
	for _, s := range policySteps() {
		if s.name == policy {
			return s.set(threadID())
		}
	}
	return fmt.Errorf("no %s on %s", policy, runtime.GOOS)
}

// extraP counts the goroutines that hold a P of their own for a phase
// (holdP): GOMAXPROCS is the process's base plus that many, so the
// responses' goroutines keep the Ps they had.
var extraP struct {
	mu   sync.Mutex
	n    int
	base int
}

// takeP raises GOMAXPROCS by one for a goroutine that holds its P; the
// returned func gives it back.
func takeP() (release func()) {
	extraP.mu.Lock()
	if extraP.n == 0 {
		extraP.base = runtime.GOMAXPROCS(0)
	}
	extraP.n++
	runtime.GOMAXPROCS(extraP.base + extraP.n)
	extraP.mu.Unlock()
	return func() {
		extraP.mu.Lock()
		extraP.n--
		runtime.GOMAXPROCS(extraP.base + extraP.n)
		extraP.mu.Unlock()
	}
}
