package selftest

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/replay"
)

// Floor is the machine's own timing noise, measured before each run of the
// sections: how late a thread that does nothing but sleep to absolute
// deadlines wakes up, how much CPU time the hypervisor took from this
// machine (steal), and the load. No client can be more punctual than the
// machine wakes it, so the schedule and timestamp figures are read beside
// it (docs/PERFORMANCE.md, "Verdicts").
type Floor struct {
	// Method names the sleep measured, Policy the thread's scheduling
	// policy (replay.PolicyNormal or replay.PolicyFIFO); Wakeups were
	// requested every Interval.
	Method   string
	Policy   string
	Wakeups  int
	Interval time.Duration
	// P50, P99 and Max are the wake-ups' lateness: the time the thread
	// ran again minus the deadline it slept to.
	P50, P99, Max time.Duration
	// Load is /proc/loadavg when the measurement ended.
	Load [3]float64
}

// measureFloor sleeps n times to deadlines every interval and returns the
// lateness of the wake-ups, at the normal policy (SCHED_OTHER), as
// cyclictest does without -p.
func measureFloor(n int, interval time.Duration) Floor {
	late, method := wakeups(n, interval)
	f := Floor{Method: method, Policy: replay.PolicyNormal, Wakeups: len(late), Interval: interval, Load: loadAverage()}
	if len(late) > 0 {
		f.P50, f.P99, f.Max = quantiles(late)
	}
	return f
}

// measureFloorFIFO is measureFloor on a thread given SCHED_FIFO, the
// policy the replay's dispatcher thread asks for first (cyclictest -p):
// the floor a dispatcher that got it is judged against. why says why the
// kernel refused it (then there is no such floor). The thread ends with
// the measurement: a realtime thread must not go back to Go's pool.
func measureFloorFIFO(n int, interval time.Duration) (f Floor, why string) {
	type result struct {
		f   Floor
		why string
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := replay.SetThreadPolicy(replay.PolicyFIFO); err != nil {
			runtime.UnlockOSThread()
			ch <- result{why: err.Error()}
			return
		}
		f := measureFloor(n, interval)
		f.Policy = replay.PolicyFIFO
		ch <- result{f: f}
		// Still locked: the runtime ends the thread with the goroutine.
	}()
	r := <-ch
	return r.f, r.why
}

// CPUStat is the aggregate "cpu" line of /proc/stat, in clock ticks.
type CPUStat struct {
	Total, Steal uint64
	// OK is false where the OS has no /proc/stat or it names no steal
	// column (Linux before 2.6.11).
	OK bool
}

func readCPUStat() CPUStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUStat{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPUStat(line)
}

// parseCPUStat reads "cpu user nice system idle iowait irq softirq steal
// guest guest_nice". guest and guest_nice are already inside user and
// nice, so they are not added to the total.
func parseCPUStat(line string) CPUStat {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPUStat{}
	}
	var s CPUStat
	for i, v := range f[1:9] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return CPUStat{}
		}
		s.Total += n
		if i == 7 {
			s.Steal = n
		}
	}
	s.OK = true
	return s
}

// StealShare is the share of all CPU time between two readings that the
// hypervisor gave to other machines; -1 when it is not known.
func StealShare(a, b CPUStat) float64 {
	if !a.OK || !b.OK || b.Total <= a.Total {
		return -1
	}
	return float64(b.Steal-a.Steal) / float64(b.Total-a.Total)
}

// median returns the middle value (the lower middle one of an even count)
// and the smallest and largest; zeros for none.
func median[T int64 | float64 | time.Duration](v []T) (med, lo, hi T) {
	if len(v) == 0 {
		return
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2], s[0], s[len(s)-1]
}
