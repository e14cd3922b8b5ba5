//go:build !linux

package sim

import "time"

// sleepPrecise is time.Sleep where no high-resolution thread sleep is
// wired in.
func sleepPrecise(d time.Duration) { time.Sleep(d) }
