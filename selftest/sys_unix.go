//go:build unix

package selftest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// raiseNoFile lifts the soft open-file limit to the hard limit, as far as
// the process is allowed, and returns the limits in force afterwards.
func raiseNoFile() (soft, hard uint64) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = rl.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			rl = want
		}
	}
	return uint64(rl.Cur), uint64(rl.Max)
}

// procCPU reads another process's user+system CPU time from /proc (Linux);
// 0 where that is not available.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of stat(5), in clock ticks of
	// 1/100 s on every Linux platform Go supports (USER_HZ).
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+st) * 10 * time.Millisecond
}
