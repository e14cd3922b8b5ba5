//go:build !unix

package stream

import "time"

// cpuTime is unknown here; benchmarks then report wall-clock figures only.
func cpuTime() time.Duration { return 0 }
