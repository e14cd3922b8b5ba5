//go:build !linux

package replay

import "time"

// threadSleep is false: elsewhere the dispatcher spins the whole
// spinWindow after Go's timer.
const threadSleep = false

func sleepThread(time.Duration) {}
