package cputime

import (
	"runtime"
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
