package selftest

import (
	"testing"
	"time"
)

// BenchmarkPaced1024 is section 3's 1,024 aligned streams alone, over plain
// HTTP (100 tokens each, one every 20 ms, the first held 500 ms): the
// client's CPU per chunk when every chunk is a read of its own, the
// timestamp error's p99 and the chunks read late, so that a change to the
// read path can be measured and profiled (-cpuprofile) on this level alone.
//
//	go test -run '^$' -bench Paced1024 -benchtime 3x ./selftest
func BenchmarkPaced1024(b *testing.B) {
	plan := Plan{StampStreams: []int{1024}, StampPace: 20 * time.Millisecond, StampTokens: 100, StampFirstToken: 500 * time.Millisecond}
	var cpu, kernel, p99, late float64
	for i := 0; i < b.N; i++ {
		res := benchRun(b, &plan, 3)
		s := res.Stamp[0]
		if s.Failed > 0 {
			b.Fatalf("%d requests failed", s.Failed)
		}
		cpu += float64(perToken(s.ClientCPU, int64(s.Chunks)))
		kernel += float64(perToken(s.ClientSys, int64(s.Chunks)))
		p99 += float64(s.P99) / 1e3
		late += float64(s.ReadLate)
	}
	b.ReportMetric(cpu/float64(b.N), "client-ns/chunk")
	b.ReportMetric(kernel/float64(b.N), "kernel-ns/chunk") // the system-time part of client-ns
	b.ReportMetric(p99/float64(b.N), "p99-µs")
	b.ReportMetric(late/float64(b.N), "read-late")
	b.ReportMetric(0, "ns/op")
}
