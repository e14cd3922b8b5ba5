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
//	go test -run '^$' -bench Schedule500 -benchtime 3x ./selftest
func BenchmarkSchedule500(b *testing.B) {
	benchSched(b, 500)
}

// BenchmarkSchedule2000 is the same at 2,000 requests/s.
func BenchmarkSchedule2000(b *testing.B) {
	benchSched(b, 2000)
}

func benchSched(b *testing.B, rate float64) {
	plan := Plan{SchedRates: []float64{rate}, SchedFor: time.Second, SchedTokens: 16}
	var p50, p99 float64
	for i := 0; i < b.N; i++ {
		res := benchRun(b, &plan, 4)
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

// BenchmarkClientCPU256 is section 1 at 256 streams alone (16 bursts of
// 256 streams × 256 tokens, about 1 M tokens): the client's CPU
// per streamed token, its GC share and allocations, so that a change to the
// read path can be measured (and profiled with -cpuprofile, which then
// holds this level alone) without the other levels.
//
//	go test -run '^$' -bench ClientCPU256 -benchtime 3x ./selftest
func BenchmarkClientCPU256(b *testing.B) {
	plan := Plan{CPUStreams: []int{256}, CPUTokens: 256, CPUTotal: 1 << 20}
	var cpu, kernel, setup, server, gc, allocs float64
	for i := 0; i < b.N; i++ {
		res := benchRun(b, &plan, 1)
		c := res.CPU[0]
		if c.Failed > 0 {
			b.Fatalf("%d of %d requests failed", c.Failed, c.Requests)
		}
		cpu += float64(c.ClientPerToken())
		kernel += float64(c.ClientSysPerToken())
		setup += float64(perToken(c.SetupCPU, c.Tokens))
		server += float64(c.ServerPerToken())
		gc += c.GCShare()
		allocs += c.AllocsPerToken()
	}
	b.ReportMetric(cpu/float64(b.N), "client-ns/token")
	b.ReportMetric(kernel/float64(b.N), "kernel-ns/token") // the system-time part of client-ns
	b.ReportMetric(setup/float64(b.N), "setup-ns/token")   // before the first phase, not in client-ns
	// The simulator child shares the client's cores: a change on its side
	// (its writes per token) shows here, and in the client's figure only
	// through the machine's contention.
	b.ReportMetric(server/float64(b.N), "server-ns/token")
	b.ReportMetric(100*gc/float64(b.N), "GC-%")
	b.ReportMetric(allocs/float64(b.N), "allocs/token")
	b.ReportMetric(0, "ns/op")
}

// benchRun runs one section of plan against a simulator child.
func benchRun(b *testing.B, plan *Plan, section int) *Result {
	b.Helper()
	// Repeats 1: the rows read are the first run's; the default three
	// repeats tripled the benchmark's time (and the simulator's writes a
	// system-call count sees) for rows nobody read.
	res, err := Run(context.Background(), Config{Plan: plan, Sections: []int{section}, Repeats: 1,
		Child: []string{testExe(b)}, ChildEnv: []string{childEnv + "=1"}, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	return res
}
