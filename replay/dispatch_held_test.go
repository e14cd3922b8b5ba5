package replay

import (
	"io"
	"log"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TestBurstWrittenByItsRelease: a plain-HTTP burst's requests are written
// by their release itself, one after another from one goroutine: every one
// is counted as written by the release, and their send stamps follow the
// requests' order (goroutines woken at a gate would stamp in any order).
// Over TLS, whose records the release cannot cut, each request sends
// itself as before, and so it does without --prewarm, whose connections'
// set-up belongs in the request's time. Counters and order, not clocks.
func TestBurstWrittenByItsRelease(t *testing.T) { eachTransport(t, burstRelease) }

// eachTransport runs check over plain HTTP on connections opened
// beforehand, over TLS, and over plain HTTP without --prewarm.
func eachTransport(t *testing.T, check func(t *testing.T, tls, prewarm bool)) {
	t.Run("http", func(t *testing.T) { check(t, false, true) })
	t.Run("tls", func(t *testing.T) { check(t, true, true) })
	t.Run("http-no-prewarm", func(t *testing.T) { check(t, false, false) })
}

// heldRun replays wl against a chat server over plain HTTP or TLS, with
// connections opened beforehand or not.
func heldRun(t *testing.T, wl *workload.Workload, tls, prewarm bool) (*Summary, []trace.Record) {
	ts := httptest.NewUnstartedServer(&chatServer{})
	if tls {
		ts.Config.ErrorLog = log.New(io.Discard, "", 0)
		ts.StartTLS()
	} else {
		ts.Start()
	}
	defer ts.Close()
	cfg := baseConfig(t, wl, ts.URL)
	cfg.Model, cfg.Insecure, cfg.Prewarm = "m", true, prewarm
	return runRead(t, cfg)
}

// burstRelease runs two bursts and checks who wrote them.
func burstRelease(t *testing.T, tls, prewarm bool) {
	const n = 16
	sum, recs := heldRun(t, handWorkload(
		workload.Phase{Kind: workload.KindBurst, Concurrency: n, Requests: n},
		workload.Phase{Kind: workload.KindBurst, Concurrency: n, Requests: n},
	), tls, prewarm)
	if sum.OK != 2*n || sum.Failed != 0 {
		t.Fatalf("summary %q: want %d ok", sum, 2*n)
	}
	want := 2 * n
	if tls || !prewarm {
		want = 0
	}
	if sum.ReleaseWrites != want {
		t.Errorf("%d requests written by their release, want %d", sum.ReleaseWrites, want)
	}
	if want == 0 {
		return
	}
	byPhase := map[int][]trace.Record{}
	for _, r := range recs {
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	for ph, rs := range byPhase {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
		for i := 1; i < len(rs); i++ {
			if rs[i].Sent <= rs[i-1].Sent {
				t.Errorf("phase %d: %s sent at %d, not after %s at %d: not written in order by one goroutine",
					ph, rs[i].ID, rs[i].Sent, rs[i-1].ID, rs[i-1].Sent)
			}
			if rs[i].Scheduled != rs[0].Scheduled {
				t.Errorf("phase %d: %s scheduled %d, %s %d: one release, one instant", ph, rs[i].ID, rs[i].Scheduled, rs[0].ID, rs[0].Scheduled)
			}
		}
	}
}

// TestHeldSendRetriedOnClosedKeepAlive: a burst, or an open-loop phase,
// whose kept-alive connections the server closes (as llama-server does
// after each answer) still gets every request answered: a request whose
// kept connection was closed before or at its release is sent once more on
// a new connection, with its note, as a request sent by its own goroutine
// would be.
func TestHeldSendRetriedOnClosedKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		name string
		wl   *workload.Workload
	}{
		{"burst", handWorkload(
			workload.Phase{Kind: workload.KindBurst, Concurrency: 4, Requests: 4},
			workload.Phase{Kind: workload.KindBurst, Concurrency: 4, Requests: 4},
		)},
		{"rate", spacedWorkload(8, 10*time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testutil.StartKeepAliveCloser(t, goodStream, true)
			cfg := baseConfig(t, tc.wl, srv.URL)
			cfg.Model, cfg.ServerMetrics, cfg.ServerTokenize, cfg.Prewarm = "m", ServerMetricsOff, ServerTokenizeOff, true
			sum, recs := runRead(t, cfg)
			if sum.OK != 8 || sum.Failed != 0 || srv.Answered.Load() != 8 {
				t.Fatalf("summary %q, %d answered", sum, srv.Answered.Load())
			}
			// A burst waits until every request is held; an open-loop
			// request not held by its due time (a loaded machine) sends
			// itself, retried the same way.
			if tc.name == "burst" && sum.ReleaseWrites == 0 {
				t.Error("no request was written by its release: the held path went untested")
			}
			t.Logf("%d written by their release, %d retried", sum.ReleaseWrites, sum.Retried)
			notes := 0
			for _, r := range recs {
				if strings.Contains(r.Notes, "retried once on a new connection") {
					notes++
				}
			}
			if sum.Retried == 0 || notes != sum.Retried || int64(sum.Retried) != srv.DroppedPOST.Load() {
				t.Errorf("%d retried, %d notes, %d completions dropped by the server", sum.Retried, notes, srv.DroppedPOST.Load())
			}
		})
	}
}

// spacedWorkload is one rate phase of n requests gap apart, the middle
// three at one instant (a request log's burst).
func spacedWorkload(n int, gap time.Duration) *workload.Workload {
	wl := handWorkload(workload.Phase{Kind: workload.KindRate, Concurrency: n, Requests: n})
	at := 0
	for i := range wl.Requests {
		if i <= n/2-1 || i > n/2+1 {
			at++
		}
		wl.Requests[i].Offset = int64(at) * int64(gap)
	}
	return wl
}

// TestOpenLoopWrittenByDispatcher: an open-loop phase's requests are
// prepared ahead of their due times, as far as their connections' writes,
// and written by the dispatcher itself at each due time: every send
// stamp follows the schedule's order (the dispatcher stamps each right
// before its write, one after another; requests at one instant in their
// order), each request records its instant as scheduled, and the
// dispatcher counts the requests it wrote. Over TLS, or without
// --prewarm, each request sends itself from its goroutine, as before.
// Counters and order, not clocks.
func TestOpenLoopWrittenByDispatcher(t *testing.T) { eachTransport(t, openRelease) }

// openRelease runs a rate phase and checks who wrote its requests.
func openRelease(t *testing.T, tls, prewarm bool) {
	const n = 12
	wl := spacedWorkload(n, 20*time.Millisecond)
	sum, recs := heldRun(t, wl, tls, prewarm)
	if sum.OK != n || sum.Failed != 0 || sum.NotSent != 0 {
		t.Fatalf("summary %q: want %d ok", sum, n)
	}
	if sum.Dispatch.Waits != n-2 {
		t.Errorf("the dispatcher waited %d times for %d instants", sum.Dispatch.Waits, n-2)
	}
	if tls || !prewarm {
		if sum.ReleaseWrites != 0 {
			t.Errorf("%d requests written by the dispatcher, want 0: each sends itself", sum.ReleaseWrites)
		}
		return
	}
	// A request whose round trip had not reached its connection's write
	// by its due time (its goroutine held up 10 ms on a loaded machine)
	// sends itself, stamped right before its own write: on a machine at
	// load 15, a third to half of them with a lead of 5 ms.
	t.Logf("%d of %d written by the dispatcher; dispatcher %+v", sum.ReleaseWrites, n, sum.Dispatch)
	if sum.ReleaseWrites == 0 {
		t.Errorf("none of %d requests written by the dispatcher", n)
	}
	if sum.Dispatch.Work <= 0 {
		t.Errorf("dispatcher counters %+v: no work at its deadlines", sum.Dispatch)
	}
	byIdx := map[int]trace.Record{}
	for _, r := range recs {
		byIdx[r.Index] = r
	}
	first := byIdx[0]
	for i := 1; i < n; i++ {
		r, prev := byIdx[i], byIdx[i-1]
		// Stamped by the dispatcher one after another in the schedule's
		// order; one that sent itself may write after the next is due.
		if sum.ReleaseWrites == n && r.Sent <= prev.Sent {
			t.Errorf("%s sent at %d, not after %s at %d: not in the schedule's order", r.ID, r.Sent, prev.ID, prev.Sent)
		}
		if want := wl.Requests[i].Offset - wl.Requests[0].Offset; r.Scheduled-first.Scheduled != want {
			t.Errorf("%s scheduled %d after the first, want its offset's %d", r.ID, r.Scheduled-first.Scheduled, want)
		}
		if r.Sent < r.Scheduled {
			t.Errorf("%s sent at %d before its due time %d", r.ID, r.Sent, r.Scheduled)
		}
	}
}
