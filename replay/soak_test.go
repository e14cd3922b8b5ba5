package replay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// soakEnv runs the long soak: LLMREPLAY_SOAK=10m keeps 1,000 streams open
// against the simulator for ten minutes. Without it the soak is a few
// seconds long.
const soakEnv = "LLMREPLAY_SOAK"

// soakWorkload is one closed-loop phase of n requests kept c at a time.
// The requests share one message, so a long soak's workload stays small.
func soakWorkload(c, n int) *workload.Workload {
	wl := handWorkload()
	wl.Header.Phases = []workload.Phase{{Index: 0, Name: "soak", Kind: workload.KindClosed, Concurrency: c, Requests: n, MaxTokens: 8}}
	msgs := []workload.Message{{Role: "user", Content: "alpha beta gamma delta count up from 1"}}
	wl.Requests = make([]workload.Request, n)
	for i := range wl.Requests {
		wl.Requests[i] = workload.Request{ID: fmt.Sprintf("s%07d", i), Index: i, Messages: msgs, InputTokens: 10, MaxTokens: 8, IgnoreEOS: true, Slot: i % c}
	}
	wl.Header.Requests = n
	return wl
}

// resources is what a leak would grow.
type resources struct {
	goroutines int
	fds        int
	heapInuse  uint64
}

func (r resources) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, %.1f MB heap in use", r.goroutines, r.fds, float64(r.heapInuse)/(1<<20))
}

func measure(t *testing.T) resources {
	t.Helper()
	// Two collections: sync.Pool keeps what it held through the first (its
	// victim cache), which is reuse, not a leak.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count file descriptors")
	}
	return resources{runtime.NumGoroutine(), len(fds), ms.HeapInuse}
}

// settle waits for closed connections' goroutines to end (the server side
// sees the client's close a little later) before measuring.
func settle(t *testing.T, base resources, slackG, slackFD int) resources {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := measure(t)
		if (r.goroutines <= base.goroutines+slackG && r.fds <= base.fds+slackFD) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSoak(t *testing.T) {
	const streams = 1000
	// Each stream is 8 tokens 50 ms apart after a first token held 1 s,
	// so a request takes about 1.4 s. What keeps 1,000 of them open
	// together is the gate in front of the simulator, not the hold: a
	// request waits there until 1,000 are open. Timing could not promise
	// it: under -race on a loaded two-core machine the first wave of 1,000
	// sends took longer than a request lasts, so the earliest ended before
	// the last began (peaks of 885 and 744 in flight, not a leak).
	const interval = 50 * time.Millisecond
	const hold = time.Second
	// The short soak: two rounds of two requests per stream, so the second
	// round's heap can be compared with the first's.
	per := hold + 8*interval // one request
	total, round := time.Duration(0), 2*per
	if d := os.Getenv(soakEnv); d != "" {
		var err error
		if total, err = time.ParseDuration(d); err != nil {
			t.Fatalf("%s=%q: give a duration such as 10m", soakEnv, d)
		}
		round = min(total, time.Minute)
	} else if testing.Short() {
		t.Skip("a few seconds at 1,000 streams")
	}
	prof, err := sim.LookupProfile("fast")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(sim.Config{Profile: prof, TokenInterval: interval, FirstTokenDelay: hold, Model: "soak"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := newOpenGate(streams, 20*time.Second)
	srv := &http.Server{Handler: g.wrap(s.Handler()), ReadHeaderTimeout: sim.HeaderTimeout}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	base := measure(t)
	t.Logf("before: %s", base)
	// Whole waves: a round's last requests would otherwise wait at the
	// gate for company that never comes.
	perRound := max(1, int(round.Seconds()/per.Seconds())) * streams
	var first resources
	start := time.Now()
	sent, chunks := 0, 0
	for r := 0; r < 2 || time.Since(start) < total; r++ {
		wl := soakWorkload(streams, perRound)
		cfg := Config{
			Workload: wl, URL: url, API: "openai-chat", Label: "soak",
			Trace:       filepath.Join(t.TempDir(), fmt.Sprintf("soak%d.trace.zst", r)),
			IdleTimeout: 30 * time.Second, Timeout: time.Minute, Prewarm: true,
		}
		t0 := time.Now()
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(t0)
		if sum.Sent != perRound || sum.OK+sum.Failed != perRound {
			t.Fatalf("round %d: summary %q, want %d requests accounted for", r, sum, perRound)
		}
		if sum.Failed != 0 {
			t.Errorf("round %d: %q: a healthy simulator's requests failed", r, sum)
		}
		n, c, peak := checkSoakTrace(t, cfg.Trace, wl)
		if peak < streams*9/10 {
			t.Errorf("round %d: at most %d requests were in flight at once, want about %d (the gate let %d through on its timeout)", r, peak, streams, g.timedOut.Load())
		}
		sent += n
		chunks += c
		wl, cfg.Workload = nil, nil // the next round's workload is not a leak
		got := settle(t, base, 20, 10)
		if r == 0 {
			first = got
		}
		t.Logf("round %d: %d requests in %v (%.0f/s, peak %d in flight, %d past the gate on its timeout), after: %s", r, n, el.Round(time.Millisecond), float64(n)/el.Seconds(), peak, g.timedOut.Load(), got)
		if got.goroutines > base.goroutines+20 || got.fds > base.fds+10 {
			t.Fatalf("round %d left %s; before the soak: %s", r, got, base)
		}
		// The heap after each round against the first: pools and caches
		// are warm after one round, so growth after it is a leak.
		if got.heapInuse > first.heapInuse+max(first.heapInuse/4, 16<<20) {
			t.Fatalf("round %d: heap in use grew from %s to %s", r, first, got)
		}
	}
	t.Logf("soak: %d requests, %d chunks in %v at %d concurrent streams", sent, chunks, time.Since(start).Round(time.Second), streams)
}

// openGate holds each generation request until want of them are open at
// once, then lets them all go; a request that waited longer than wait goes
// alone (and is counted), so a client that cannot open want streams fails
// the peak check instead of hanging the test.
type openGate struct {
	want     int
	wait     time.Duration
	mu       sync.Mutex
	open     int
	full     chan struct{} // closed when open reaches want; then replaced
	timedOut atomic.Int64
}

func newOpenGate(want int, wait time.Duration) *openGate {
	return &openGate{want: want, wait: wait, full: make(chan struct{})}
}

func (g *openGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" { // not /tokenize, /metrics
			h.ServeHTTP(w, r)
			return
		}
		g.mu.Lock()
		g.open++
		full := g.full
		if g.open >= g.want {
			close(g.full)
			g.full = make(chan struct{})
		}
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.open--
			g.mu.Unlock()
		}()
		timer := time.NewTimer(g.wait)
		select {
		case <-full:
		case <-timer.C:
			g.timedOut.Add(1)
		case <-r.Context().Done():
		}
		timer.Stop()
		h.ServeHTTP(w, r)
	})
}

// checkSoakTrace reads a soak trace without keeping it: every workload
// request exactly once, each a complete count-up answer.
func checkSoakTrace(t *testing.T, path string, wl *workload.Workload) (n, chunks, peak int) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := make(map[string]bool, len(wl.Requests))
	// +1 at each send, -1 at each end: the peak of the running sum is the
	// most requests that were in flight at once.
	type edge struct {
		t int64
		d int
	}
	edges := make([]edge, 0, 2*len(wl.Requests))
	for r.Scan() {
		rec := r.Record()
		if seen[rec.ID] {
			t.Fatalf("%s is twice in the trace", rec.ID)
		}
		seen[rec.ID] = true
		if rec.Error == nil && (rec.FinishReason != "length" || len(rec.Chunks) < 8) {
			t.Fatalf("%s: finish %q with %d chunks, want 8 tokens and finish length", rec.ID, rec.FinishReason, len(rec.Chunks))
		}
		chunks += len(rec.Chunks)
		edges = append(edges, edge{rec.Sent, 1}, edge{rec.Done, -1})
	}
	if err := r.Err(); err != nil || r.Truncated() {
		t.Fatalf("trace %s: %v (truncated %v)", path, err, r.Truncated())
	}
	for _, q := range wl.Requests {
		if !seen[q.ID] {
			t.Fatalf("%s is missing from the trace", q.ID)
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		return edges[i].t < edges[j].t || (edges[i].t == edges[j].t && edges[i].d < edges[j].d)
	})
	open := 0
	for _, e := range edges {
		open += e.d
		peak = max(peak, open)
	}
	return len(seen), chunks, peak
}
