package replay

import (
	"golang.org/x/sys/unix"

	"github.com/llmreplay/llmreplay/trace"
)

// WallClockError asks the kernel how far its wall clock may be off: the
// NTP discipline keeps an estimated and a maximum error (microseconds), and
// STA_UNSYNC set means nobody is disciplining the clock. adjtimex with no
// mode bits only reads; it needs no privilege.
func WallClockError() trace.Clock {
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return trace.Clock{}
	}
	return trace.Clock{
		Source:     "adjtimex",
		Synced:     tx.Status&unix.STA_UNSYNC == 0 && state != unix.TIME_ERROR,
		EstErrorNs: int64(tx.Esterror) * 1000, // int32 on 32-bit Linux
		MaxErrorNs: int64(tx.Maxerror) * 1000,
	}
}
