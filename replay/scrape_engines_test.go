package replay_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/workload"
)

// TestScrapeEngineFixtures: a run scrapes each engine's recorded /metrics
// body (servermetrics/testdata, written from each project's documented
// names) from an httptest server given as --server-metrics URL, and the
// analysis of the trace reads each engine's names as the fixture's values
// say: the whole chain, endpoint to table, for every known engine.
func TestScrapeEngineFixtures(t *testing.T) {
	// A paced profile: 1,024 tokens make the run last about 2.5 s, some 50
	// scrapes at 50 ms. With 48 tokens (0.3 s) a loaded machine (two race
	// suites at once) fitted only 2 scrapes in, none inside the phase.
	srv := startSim(t, "llamacpp-rtx5090-q4km", nil)
	wl := build(t, workload.ShapeChat, "burst:2", 1024, "unique")
	for _, tc := range []struct {
		file, ctype      string
		running, waiting float64
		kv               float64 // NaN-free: -1 for none
	}{
		{"vllm.metrics", "text/plain; version=0.0.4", 3, 5, 0.875},
		{"vllm.openmetrics", "application/openmetrics-text; version=1.0.0", 3, 5, 0.875},
		{"sglang.metrics", "text/plain; version=0.0.4", 16, 4, 0.62},
		{"llamacpp.metrics", "text/plain; version=0.0.4", 2, 6, 0.25},
		{"tgi.metrics", "text/plain", 8, 3, -1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel() // each case its own metrics server; the simulator is shared and closed after all
			body, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Write(body)
			}))
			defer ms.Close()
			sum, _, _, path := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
				c.ServerMetrics = ms.URL + "/metrics"
				c.ServerMetricsInterval = 50 * time.Millisecond
			})
			if sum.OK != 2 {
				t.Fatalf("summary %s", sum)
			}
			res, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			g := res.Groups([]string{analyze.KeyConcurrency})[0]
			// The fixture's values never change, so peak = mean = them.
			if info := res.Traces[0]; info.Scrapes < 3 || info.ScrapesFailed != 0 {
				t.Errorf("%d scrapes, %d failed (%s)", info.Scrapes, info.ScrapesFailed, info.ScrapeError)
			}
			if g.Values["server_running_peak"].Value != tc.running || g.Values["server_waiting_avg"].Value != tc.waiting {
				t.Errorf("running %v, waiting %v; want %v, %v", g.Values["server_running_peak"], g.Values["server_waiting_avg"], tc.running, tc.waiting)
			}
			kv := g.Values["server_kv_usage_peak"]
			if (tc.kv < 0) == kv.Valid() || (tc.kv >= 0 && kv.Value != tc.kv) {
				t.Errorf("kv %v, want %v", kv, tc.kv)
			}
		})
	}
}
