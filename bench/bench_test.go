package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
)

// TestFastProfileAt256Streams is the issue's "bench against the fast
// profile at concurrency 256 completes without errors".
func TestFastProfileAt256Streams(t *testing.T) {
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Replay:      replay.Config{API: "openai-chat", Salt: true, Prewarm: true},
		Profile:     "fast",
		Concurrency: []int{256},
		MaxTokens:   64,
		Repeats:     1,
		Results:     dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Sent != 256 || s.OK != 256 || s.Failed != 0 {
		t.Fatalf("summary: %s", s)
	}
	if !res.Simulated || res.Profile != "fast" {
		t.Errorf("result says simulated=%v profile=%q", res.Simulated, res.Profile)
	}
	for _, p := range []string{res.Workload, res.Trace, res.TableFile, res.JSONFile, res.ReportFile} {
		if _, err := os.Stat(p); err != nil || filepath.Dir(p) != dir {
			t.Errorf("expected file %s in %s: %v", p, dir, err)
		}
	}
	// The trace header says plainly that the server was simulated.
	r, err := trace.Open(res.Trace)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	r.Close()
	if !h.Simulated || h.SimProfile != "fast" {
		t.Errorf("trace header: simulated=%v profile=%q", h.Simulated, h.SimProfile)
	}
	md, _ := os.ReadFile(res.TableFile)
	if !strings.Contains(string(md), "SIMULATED") || !strings.Contains(string(md), "256") {
		t.Errorf("table file does not say the server was simulated or lacks the 256 row:\n%s", md)
	}
	if !strings.Contains(res.Table, "256") {
		t.Errorf("table lacks the 256 row:\n%s", res.Table)
	}
}

func TestBadConcurrencyIsRefused(t *testing.T) {
	_, err := Run(context.Background(), Config{Concurrency: []int{0}, Results: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "Config.Concurrency 0 is out of range") {
		t.Fatalf("want a Config.Concurrency error, got %v", err)
	}
}

// bench's default repeats are the fewest runs per level whose median over
// runs (aggregate tok/s, one sample per run) has a bounded 95% interval:
// with one run fewer, check could only say INCONCLUSIVE on every per-run
// claim over bench's own trace. Ranks from the same order-statistic
// interval check uses (2·(1/2)⁶ = 0.031 ≤ 0.05 < 2·(1/2)⁵ = 0.0625).
func TestDefaultRepeatsBoundTheMedianOverRuns(t *testing.T) {
	bounded := func(n int64) bool {
		l, h := analyze.OrderCI(n, 0.5, analyze.Confidence)
		return l >= 1 && h <= n
	}
	if !bounded(DefaultRepeats) {
		t.Errorf("DefaultRepeats %d leaves the median over runs without a 95%% interval", DefaultRepeats)
	}
	if bounded(DefaultRepeats - 1) {
		t.Errorf("DefaultRepeats %d is more than needed: %d runs already bound the median", DefaultRepeats, DefaultRepeats-1)
	}
	if DefaultRepeats != 6 {
		t.Errorf("DefaultRepeats = %d; the docs (README, METRICS.md) say 6", DefaultRepeats)
	}
}
