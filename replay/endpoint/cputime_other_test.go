//go:build !unix

package endpoint

import "time"

// cpuTime is unknown here; benchmarks then report wall-clock figures only.
func cpuTime() time.Duration { return 0 }
