package replay_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

func readScrapes(t *testing.T, path string) (recs int, scrapes []trace.Scrape) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.IncludeScrapes()
	for r.Scan() {
		if s := r.Scrape(); s != nil {
			if s.Source == trace.SourceClock {
				continue // the client's own clock readings (kts.go), not the server's
			}
			c := *s
			c.Samples = append([]trace.Sample(nil), s.Samples...)
			scrapes = append(scrapes, c)
			continue
		}
		recs++
	}
	if r.Err() != nil || r.Truncated() {
		t.Fatalf("trace: err %v truncated %v", r.Err(), r.Truncated())
	}
	return recs, scrapes
}

// TestScrapeSimDuringBurst: with --server-metrics auto the run scrapes the
// simulator's /metrics into the trace on the run clock, and what the
// scrapes say is the simulator's model: 6 streams released together on 2
// slots run 2 at a time with the rest waiting.
func TestScrapeSimDuringBurst(t *testing.T) {
	srv := startSim(t, "llamacpp-rtx5090-q4km", func(c *sim.Config) { c.Slots = 2 })
	// 600 tokens make a wave of two streams last about 1.5 s, so four
	// requests wait for 3 s: readings every 50 ms see the queue even when
	// a loaded machine stalls some of them (one stall no longer spaces
	// the next out, TestScrapeOneStallDoesNotSpaceOut). With 48 tokens a
	// loaded machine spread the six arrivals over more than a wave.
	wl := build(t, workload.ShapeChat, "burst:6", 600, "unique")
	var status replay.ServerMetricsStatus
	sum, h, _, path := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
		c.ServerMetrics = replay.ServerMetricsAuto
		c.ServerMetricsInterval = 50 * time.Millisecond
		c.OnServerMetrics = func(s replay.ServerMetricsStatus) { status = s }
	})
	if sum.OK != 6 {
		t.Fatalf("summary: %s", sum)
	}
	if !status.On || status.Target != srv.URL()+"/metrics" {
		t.Errorf("status %+v", status)
	}
	if h.Options["server_metrics"] != srv.URL()+"/metrics" || h.Options["server_metrics_interval"] != "50ms" {
		t.Errorf("header options %v", h.Options)
	}
	recs, scrapes := readScrapes(t, path)
	if recs != 6 || len(scrapes) < 3 {
		t.Fatalf("%d records, %d scrapes: want 6 and at least the first, one during, the last", recs, len(scrapes))
	}
	// The first and the last reading get 5 s and must succeed; a
	// periodic one (at least 1 s) may still miss on a very loaded
	// machine: it is recorded as failed, and skipped here.
	if scrapes[0].Error != "" || scrapes[len(scrapes)-1].Error != "" {
		t.Errorf("the first or the last scrape failed: %q, %q", scrapes[0].Error, scrapes[len(scrapes)-1].Error)
	}
	ok := scrapes[:0:0]
	for _, s := range scrapes {
		if s.Error == "" {
			ok = append(ok, s)
		}
	}
	if len(ok) < 3 {
		t.Fatalf("%d of %d scrapes succeeded: want at least the first, one during, the last", len(ok), len(scrapes))
	}
	scrapes = ok
	// The model, in every reading: never more than the 2 slots running,
	// never more than the other 4 waiting. (A step that ends both running
	// streams shows 0 running beside those still waiting until the next
	// step admits them.)
	var queued []string
	for i, s := range scrapes {
		if i > 0 && s.T < scrapes[i-1].T {
			t.Errorf("scrape %d at %d before scrape %d at %d", i, s.T, i-1, scrapes[i-1].T)
		}
		st := servermetrics.Read(&s)
		if st.Engine != "llmreplay-sim" || !st.Has(servermetrics.KVUsage) || st.Value[servermetrics.Preemptions] != 0 {
			t.Errorf("scrape %d: engine %q, state %v", i, st.Engine, st.Value)
		}
		run, wait := st.Value[servermetrics.Running], st.Value[servermetrics.Waiting]
		if run > 2 || wait > 4 {
			t.Errorf("scrape %d at %v: %v running, %v waiting; the model runs at most 2 at a time and queues the other 4", i, time.Duration(s.T), run, wait)
		}
		if wait > 0 {
			queued = append(queued, fmt.Sprintf("%v: %v waiting", time.Duration(s.T).Round(time.Millisecond), wait))
		}
	}
	t.Logf("readings while requests queued: %v", queued)
	last := servermetrics.Read(&scrapes[len(scrapes)-1])
	if last.Value[servermetrics.Running] != 0 || last.Value[servermetrics.Waiting] != 0 {
		t.Errorf("the scrape after the last response: %v, want nothing running or waiting", last.Value)
	}
	// The simulator's TTFT histogram counted each request's first token
	// once: 6 in all (it served nothing else).
	if n := len(last.TTFT); n == 0 || last.TTFT[n-1].Count != 6 {
		t.Errorf("the simulator's TTFT histogram after the run: %v, want 6 first tokens", last.TTFT)
	}
	// That the queue reaches the trace needs one reading while it lasts
	// (3 s).
	if len(queued) == 0 {
		var at []string
		for _, s := range scrapes {
			at = append(at, fmt.Sprintf("%v (took %v)", time.Duration(s.T).Round(time.Millisecond), time.Duration(s.Duration).Round(time.Millisecond)))
		}
		t.Errorf("no reading landed while requests queued (readings at %v)", at)
	}
}

// TestScrapeAbsentOrFailing: under auto a server without /metrics is
// dropped after one try, said once, and the trace holds no scrape; an
// explicit URL that fails is recorded as failed scrapes and the run goes
// on.
func TestScrapeAbsentOrFailing(t *testing.T) {
	srv := startSim(t, "fast", nil)
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	wl := build(t, workload.ShapeChat, "burst:2", 8, "unique")

	var status replay.ServerMetricsStatus
	calls := 0
	sum, h, _, path := run(t, wl, front.URL, "openai-chat", func(c *replay.Config) {
		c.ServerMetrics = replay.ServerMetricsAuto
		c.OnServerMetrics = func(s replay.ServerMetricsStatus) { status = s; calls++ }
	})
	if sum.OK != 2 || calls != 1 || status.On || !strings.Contains(status.Why, "404") {
		t.Errorf("summary %s, %d announcements, status %+v", sum, calls, status)
	}
	if !strings.Contains(h.Options["server_metrics"], "not found") {
		t.Errorf("header option %q", h.Options["server_metrics"])
	}
	if _, scrapes := readScrapes(t, path); len(scrapes) != 0 {
		t.Errorf("%d scrapes of an absent /metrics", len(scrapes))
	}

	sum, _, _, path = run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
		c.ServerMetrics = front.URL + "/metrics?token=s3cret"
		c.ServerMetricsInterval = 50 * time.Millisecond
	})
	_, scrapes := readScrapes(t, path)
	if sum.OK != 2 || len(scrapes) < 2 {
		t.Fatalf("summary %s, %d scrapes: want the first and the last at least", sum, len(scrapes))
	}
	for _, s := range scrapes {
		if !strings.Contains(s.Error, "HTTP 404") || len(s.Samples) != 0 || strings.Contains(s.Target, "s3cret") {
			t.Errorf("scrape %+v: want a failed scrape, recorded without the query's secret", s)
		}
	}
}

// TestServerMetricsConfig: bad settings are refused by Resolve, naming the
// field.
func TestServerMetricsConfig(t *testing.T) {
	wl := build(t, workload.ShapeChat, "burst:1", 8, "unique")
	for _, tc := range []struct {
		set      string
		interval time.Duration
		want     string
	}{
		{"ftp://x/metrics", 0, "ServerMetrics"},
		{"sometimes", 0, "ServerMetrics"},
		{"auto", -time.Second, "ServerMetricsInterval"},
		{"auto", time.Millisecond, "ServerMetricsInterval"},
	} {
		_, err := replay.Config{Workload: wl, URL: "http://127.0.0.1:1", Trace: "x", ServerMetrics: tc.set, ServerMetricsInterval: tc.interval}.Resolve()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q every %v: error %v, want one naming %s", tc.set, tc.interval, err, tc.want)
		}
	}
}

// TestScrapeBacksOffAHugeMetrics: a /metrics of ~4 MiB of tiny series costs
// a lot to parse; the scraper spaces its scrapes out so they take at most
// about a tenth of the run, whatever the interval asked (50 ms here).
func TestScrapeBacksOffAHugeMetrics(t *testing.T) {
	var body strings.Builder
	for i := 0; body.Len() < servermetrics.MaxBody-64; i++ {
		fmt.Fprintf(&body, "m{i=\"%d\"} 1\n", i)
	}
	huge := body.String()
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, huge)
	}))
	defer ms.Close()
	srv := startSim(t, "llamacpp-rtx5090-q4km", nil)
	wl := build(t, workload.ShapeChat, "burst:2", 200, "unique")
	start := time.Now()
	sum, _, _, path := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
		c.ServerMetrics = ms.URL + "/metrics"
		c.ServerMetricsInterval = 50 * time.Millisecond
	})
	span := time.Since(start)
	defer func() { t.Logf("run %v", span) }()
	if sum.OK != 2 {
		t.Fatalf("summary %s", sum)
	}
	_, scrapes := readScrapes(t, path)
	// The first scrape (before the run) and the last (after it) are
	// taken whatever they cost; the loop's, between them, are bounded by
	// about 1/(1+10) of the time. Wide margin: a quarter of the run.
	var busy time.Duration
	for i, s := range scrapes {
		t.Logf("scrape at %v took %v: %d samples, %d dropped, error %q", time.Duration(s.T), time.Duration(s.Duration), len(s.Samples), s.Dropped, s.Error)
		if i > 0 && i < len(scrapes)-1 {
			busy += time.Duration(s.Duration)
		}
	}
	if len(scrapes) < 2 || busy > span/4 {
		t.Errorf("%d scrapes: the loop's took %v of a %v run", len(scrapes), busy, span)
	}
	for _, s := range scrapes {
		if s.Error == "" && len(s.Samples) > 0 && s.Dropped == 0 && len(s.Samples) < 100_000 {
			t.Errorf("a scrape kept %d samples and dropped none", len(s.Samples))
		}
	}
}

// TestScrapeOneStallDoesNotSpaceOut: one reading that stalls (here the
// endpoint holds its third answer 400 ms, as a busy machine holds a
// reading) does not space the next out to 10× the stall, which would
// leave the rest of a 1.5 s run without a reading: the loop judges an
// endpoint by the shortest of its last three readings.
func TestScrapeOneStallDoesNotSpaceOut(t *testing.T) {
	const stall = 400 * time.Millisecond
	var n atomic.Int32
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 3 {
			time.Sleep(stall)
		}
		io.WriteString(w, "vllm:num_requests_running 1\n")
	}))
	defer ms.Close()
	srv := startSim(t, "llamacpp-rtx5090-q4km", nil)
	wl := build(t, workload.ShapeChat, "burst:1", 600, "unique")
	sum, _, _, path := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) {
		c.ServerMetrics = ms.URL + "/metrics"
		c.ServerMetricsInterval = 50 * time.Millisecond
	})
	if sum.OK != 1 {
		t.Fatalf("summary %s", sum)
	}
	_, scrapes := readScrapes(t, path)
	var at []string
	stalled := -1
	for i, s := range scrapes {
		at = append(at, fmt.Sprintf("%v (took %v)", time.Duration(s.T).Round(time.Millisecond), time.Duration(s.Duration).Round(time.Millisecond)))
		if stalled < 0 && time.Duration(s.Duration) >= stall {
			stalled = i
		}
	}
	// After the stall, the loop's next reading comes within a few
	// intervals, far sooner than 10× the stall (4 s, after the run's
	// end): wide margin, a quarter of that, and before the reading the
	// run takes after its last response.
	if stalled < 0 || stalled+2 >= len(scrapes) {
		t.Fatalf("no stalled reading followed by a loop reading: %v", at)
	}
	end := scrapes[stalled].T + scrapes[stalled].Duration
	if gap := time.Duration(scrapes[stalled+1].T - end); gap > 10*stall/4 {
		t.Errorf("the reading after the stall came %v later: %v", gap, at)
	}
}
