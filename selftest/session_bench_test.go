package selftest

import (
	"context"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

// BenchmarkSessionCPU is section 1's measure (client CPU per streamed
// token, getrusage around replay.Run, the simulator in a child process)
// for a multi-turn replay beside a single-turn one of the same size: 512
// requests of 256 tokens at concurrency 64, as 8 bursts of 64 single
// requests or as one burst of 64 sessions of 8 turns. The sessions' run
// also resends every conversation, counts each answer with the workload's
// tokenizer and waits for each answer before the next turn.
//
//	go test -run '^$' -bench SessionCPU -benchtime 3x ./selftest
func BenchmarkSessionCPU(b *testing.B) {
	exe := testExe(b)
	for _, tc := range []struct {
		name string
		bc   workload.BuildConfig
	}{
		{"single", workload.BuildConfig{MaxTokens: 256, Schedule: "burst:64", Repeats: 8}},
		{"sessions", workload.BuildConfig{MaxTokens: 256, Schedule: "burst:64", Repeats: 1, Turns: "8"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var cpu time.Duration
			var tokens int64
			for i := 0; i < b.N; i++ {
				h := &harness{cfg: Config{Child: []string{exe}, ChildEnv: []string{childEnv + "=1"}}, dir: b.TempDir()}
				out, err := h.replayRun(context.Background(), tc.name, tc.bc, 0, false, nil)
				if err != nil {
					b.Fatal(err)
				}
				if n := failed(out.records); n > 0 || len(out.records) != 512 {
					b.Fatalf("%d records, %d failed", len(out.records), n)
				}
				cpu += out.cpu
				tokens += textTokens(out.records)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(tokens), "client-ns/token")
			b.ReportMetric(0, "ns/op")
		})
	}
}
