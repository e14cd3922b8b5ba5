//go:build !linux

package replay

import (
	"net"
	"runtime"
	"time"
)

// Kernel receive stamps are read through Linux's SO_TIMESTAMPING; other
// systems keep user-space times (the trace header says which source a run
// used).

type kread struct{}

func kernelStampsSupported() string {
	return "kernel receive timestamps are read on Linux only (this is " + runtime.GOOS + ")"
}

func withKernelStamps(net.Conn) (*kstamp, string) {
	return nil, kernelStampsSupported()
}

func (k *kstamp) read([]byte) (int, error) { panic("kernel stamps on " + runtime.GOOS) }

func (kread) close() {}

func (kread) setUserDeadline(t time.Time, set func(time.Time) error) error { return set(t) }
