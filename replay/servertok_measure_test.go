package replay_test

import (
	"os"
	"sort"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/cputime"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

// TestMeasureServerTokenizeCost is the measurement behind
// docs/PERFORMANCE.md's server-tokenizer figures, not a check (it asserts
// nothing about time): 256 streams of 64 tokens released together against
// the simulator with its send times on, three runs each with
// --server-tokenize auto and off, interleaved. It logs the p50 and p99 of
// the timestamp error (client arrival − server send, every chunk, and the
// first chunk alone) and the client's CPU time per run.
//
//	LLMREPLAY_MEASURE=1 go test ./replay -run TestMeasureServerTokenizeCost -v -count=1
func TestMeasureServerTokenizeCost(t *testing.T) {
	if os.Getenv("LLMREPLAY_MEASURE") == "" {
		t.Skip("a measurement: set LLMREPLAY_MEASURE=1")
	}
	srv := startSim(t, "fast", func(c *sim.Config) { c.SendTimes = true })
	wl := build(t, workload.ShapeChat, "burst:256", 64, "unique")
	q := func(v []float64, p float64) float64 {
		sort.Float64s(v)
		return v[int(p*float64(len(v)-1))]
	}
	for i := 0; i < 3; i++ {
		for _, mode := range []string{replay.ServerTokenizeAuto, replay.ServerTokenizeOff} {
			cpu0 := cputime.Process()
			sum, _, recs, _ := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
				c.ServerTokenize = mode
				c.Prewarm = true
			})
			cpu := cputime.Process() - cpu0
			var all, first []float64
			for _, r := range recs {
				seen := false
				for _, c := range r.Chunks {
					if c.ServerT == 0 || c.Text == "" {
						continue
					}
					us := float64(c.T-c.ServerT) / 1e3
					all = append(all, us)
					if !seen {
						first, seen = append(first, us), true
					}
				}
			}
			t.Logf("run %d %-4s: %d ok, texts counted %d; chunk error p50 %.0f µs p99 %.0f µs; first-chunk error p50 %.0f µs p99 %.0f µs; client CPU %v",
				i+1, mode, sum.OK, sum.TextsCounted, q(all, 0.5), q(all, 0.99), q(first, 0.5), q(first, 0.99), cpu.Round(time.Millisecond))
		}
	}
}
