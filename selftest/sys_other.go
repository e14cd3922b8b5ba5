//go:build !unix

package selftest

import "time"

func raiseNoFile() (soft, hard uint64) { return 0, 0 }
func procCPU(pid int) time.Duration    { return 0 }
