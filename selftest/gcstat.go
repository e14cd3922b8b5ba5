package selftest

import (
	"runtime/metrics"
	"time"
)

// gcStat is a reading of the Go runtime's own counters of garbage
// collection: section 1 gives GC's share of the client's CPU per token and
// the allocations per token beside the CPU figure, so a regression says
// whether it is the collector's.
type gcStat struct {
	cpu           time.Duration
	allocs, bytes uint64
}

var gcMetrics = []string{"/cpu/classes/gc/total:cpu-seconds", "/gc/heap/allocs:objects", "/gc/heap/allocs:bytes"}

// readGC reads the counters (zero where this Go does not have one).
func readGC() gcStat {
	s := []metrics.Sample{{Name: gcMetrics[0]}, {Name: gcMetrics[1]}, {Name: gcMetrics[2]}}
	metrics.Read(s)
	var g gcStat
	if s[0].Value.Kind() == metrics.KindFloat64 {
		g.cpu = time.Duration(s[0].Value.Float64() * 1e9)
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		g.allocs = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindUint64 {
		g.bytes = s[2].Value.Uint64()
	}
	return g
}
