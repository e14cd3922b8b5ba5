//go:build !linux

package selftest

import (
	"runtime"
	"time"
)

// wakeups sleeps to n deadlines interval apart with time.Sleep (no
// absolute-deadline sleep is reachable here) and returns how late each
// wake-up was.
func wakeups(n int, interval time.Duration) ([]int64, string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	late := make([]int64, 0, n)
	for i := 1; i <= n; i++ {
		deadline := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(deadline))
		late = append(late, max(0, int64(time.Since(deadline))))
	}
	return late, "time.Sleep to absolute deadlines"
}
