package cputime

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestProcessGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
		t.Skip("no getrusage here")
	}
	before := Process()
	// Burn a little CPU: 20 ms of spinning is far above the clock's tick.
	x := 0
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		x++
	}
	if after := Process(); after <= before {
		t.Fatalf("CPU time went from %v to %v after spinning (x=%d)", before, after, x)
	}
}

// TestSplitAddsUpAndSeesTheKernel: the two parts sum to Process, and
// system calls show in the system part, not the user part.
func TestSplitAddsUpAndSeesTheKernel(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
		t.Skip("no getrusage here")
	}
	before := Split()
	// getppid does nothing in the kernel but enter and leave it: 20 ms of
	// them is kernel time far above the clock's tick.
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		for i := 0; i < 100; i++ {
			syscall.Getppid()
		}
	}
	d := Split().Sub(before)
	if d.System <= 0 {
		t.Fatalf("20 ms of system calls added no system time: %+v", d)
	}
	a, p, b := Split().Total(), Process(), Split().Total()
	if p < a || p > b {
		t.Fatalf("Process %v is not between the split totals read around it (%v, %v)", p, a, b)
	}
}
