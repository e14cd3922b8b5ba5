package selftest

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSchedule500 is section 4 at 500 requests/s for one second: the
// open-loop dispatcher's lateness (actual minus scheduled send time)
// against a simulator child, as p50 and p99 in µs.
//
//	go test -run '^$' -bench Schedule500 -benchtime 3x ./internal/selftest
func BenchmarkSchedule500(b *testing.B) {
	benchSched(b, 500)
}

// BenchmarkSchedule2000 is the same at 2,000 requests/s.
func BenchmarkSchedule2000(b *testing.B) {
	benchSched(b, 2000)
}

func benchSched(b *testing.B, rate float64) {
	exe := testExe(b)
	plan := Plan{SchedRates: []float64{rate}, SchedFor: time.Second, SchedTokens: 16}
	var p50, p99 float64
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), Config{Plan: &plan, Sections: []int{4},
			Child: []string{exe}, ChildEnv: []string{childEnv + "=1"}, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		s := res.Sched[0]
		if s.Failed > 0 {
			b.Fatalf("%d of %d requests failed", s.Failed, s.Requests)
		}
		p50 += float64(s.P50) / 1e3
		p99 += float64(s.P99) / 1e3
	}
	b.ReportMetric(p50/float64(b.N), "p50-µs")
	b.ReportMetric(p99/float64(b.N), "p99-µs")
	b.ReportMetric(0, "ns/op")
}
