package replay

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestChoosePolicyFallsBack: the dispatcher's thread keeps the first
// policy the kernel permits, tries them best first, says why each better
// one was refused, and ends at the normal policy when none is permitted.
func TestChoosePolicyFallsBack(t *testing.T) {
	eperm := errors.New("operation not permitted")
	for _, tc := range []struct {
		name    string
		allowed map[string]bool
		want    string
		tried   []string
		refused string
	}{
		{"all permitted", map[string]bool{PolicyFIFO: true, PolicyRR: true, PolicyNice: true}, PolicyFIFO, []string{PolicyFIFO}, ""},
		{"no FIFO", map[string]bool{PolicyRR: true, PolicyNice: true}, PolicyRR, []string{PolicyFIFO, PolicyRR},
			"SCHED_FIFO: operation not permitted"},
		{"nice only", map[string]bool{PolicyNice: true}, PolicyNice, []string{PolicyFIFO, PolicyRR, PolicyNice},
			"SCHED_FIFO: operation not permitted; SCHED_RR: operation not permitted"},
		{"none", map[string]bool{}, PolicyNormal, []string{PolicyFIFO, PolicyRR, PolicyNice},
			"SCHED_FIFO: operation not permitted; SCHED_RR: operation not permitted; nice -20: operation not permitted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tried []string
			var tids []int
			var steps []policyStep
			for _, name := range []string{PolicyFIFO, PolicyRR, PolicyNice} {
				steps = append(steps, policyStep{name, func(tid int) error {
					tried = append(tried, name)
					tids = append(tids, tid)
					if !tc.allowed[name] {
						return eperm
					}
					return nil
				}})
			}
			d := startDispatchThread(steps, func() int { return 4242 })
			defer d.stop()
			if d.Policy != tc.want || d.Refused != tc.refused {
				t.Errorf("got %q (refused %q), want %q (refused %q)", d.Policy, d.Refused, tc.want, tc.refused)
			}
			if strings.Join(tried, ",") != strings.Join(tc.tried, ",") {
				t.Errorf("tried %v, want %v", tried, tc.tried)
			}
			for _, tid := range tids {
				if tid != 4242 {
					t.Errorf("a policy was set on thread %d, not the dispatcher's (4242)", tid)
				}
			}
			if d.locked() != (tc.want != PolicyNormal) {
				t.Errorf("locked %v with policy %s: a raised policy keeps its thread, the normal one lets it go", d.locked(), d.Policy)
			}
			// The thread runs what it is given, one at a time.
			n := 0
			for range 3 {
				d.run(func() { n++ })
			}
			if n != 3 {
				t.Errorf("%d of 3 jobs ran", n)
			}
		})
	}
}

// TestDispatcherLine: the line a run prints says the policy, and for
// anything short of realtime why and what would permit it.
func TestDispatcherLine(t *testing.T) {
	for _, tc := range []struct{ policy, refused, want string }{
		{PolicyFIFO, "", "dispatcher thread: SCHED_FIFO"},
		{PolicyRR, "SCHED_FIFO: x", "dispatcher thread: SCHED_RR (not permitted: SCHED_FIFO: x)"},
		{PolicyNormal, "SCHED_FIFO: x; SCHED_RR: x; nice -20: x",
			"dispatcher thread: SCHED_OTHER (not permitted: SCHED_FIFO: x; SCHED_RR: x; nice -20: x); a realtime policy needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0"},
	} {
		if got := DispatcherLine(tc.policy, tc.refused); got != tc.want {
			t.Errorf("DispatcherLine(%q, %q) = %q, want %q", tc.policy, tc.refused, got, tc.want)
		}
	}
}

// TestTakePGivesBack: each goroutine that holds a P of its own adds one to
// GOMAXPROCS while it does, however the holds overlap, and the last to
// give its P back leaves the process's own setting.
func TestTakePGivesBack(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	a := takeP()
	b := takeP()
	if got := runtime.GOMAXPROCS(0); got != base+2 {
		t.Fatalf("two holds: GOMAXPROCS %d, want %d", got, base+2)
	}
	a()
	if got := runtime.GOMAXPROCS(0); got != base+1 {
		t.Fatalf("one hold left: GOMAXPROCS %d, want %d", got, base+1)
	}
	c := takeP()
	b()
	c()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("none left: GOMAXPROCS %d, want %d", got, base)
	}
}
