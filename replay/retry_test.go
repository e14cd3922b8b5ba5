package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// runSequential sends n requests one after another to srv.
func runSequential(t *testing.T, srv *testutil.KeepAliveCloser, n int) (*Summary, []trace.Record) {
	t.Helper()
	wl := handWorkload(workload.Phase{Kind: workload.KindClosed, Concurrency: 1, Requests: n})
	cfg := baseConfig(t, wl, srv.URL)
	cfg.Model, cfg.ServerMetrics, cfg.ServerTokenize = "m", ServerMetricsOff, ServerTokenizeOff
	return runRead(t, cfg)
}

// runRead runs cfg, failing the test if the run fails as a whole, and
// returns its summary and the records of its trace.
func runRead(t *testing.T, cfg Config) (*Summary, []trace.Record) {
	t.Helper()
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := readTrace(t, cfg.Trace)
	return sum, recs
}

// TestRetryClosedKeepAlive: a request sent on a kept-alive connection the
// server had closed gets FIN before any response byte; it is sent once
// more on a new connection, with a note and the summary's count, and
// succeeds. Requests on connections of their own are never retried.
func TestRetryClosedKeepAlive(t *testing.T) {
	srv := testutil.StartKeepAliveCloser(t, goodStream, true)
	sum, recs := runSequential(t, srv, 12)
	notes := 0
	for _, r := range recs {
		if r.Error != nil {
			t.Errorf("%s failed: %v", r.ID, r.Error)
		}
		if strings.Contains(r.Notes, "retried once on a new connection") {
			notes++
			if r.Sent < r.Scheduled {
				t.Errorf("%s: sent %d before scheduled %d", r.ID, r.Sent, r.Scheduled)
			}
		}
	}
	if sum.OK != 12 || sum.Failed != 0 || srv.Answered.Load() != 12 {
		t.Fatalf("summary %q, %d answered", sum, srv.Answered.Load())
	}
	if int64(sum.Retried) != srv.Dropped.Load() || notes != sum.Retried || sum.Retried == 0 {
		t.Errorf("%d retried, %d notes, %d dropped by the server", sum.Retried, notes, srv.Dropped.Load())
	}
	if !strings.Contains(sum.String(), "retried on a new connection") {
		t.Errorf("summary %q does not count the retries", sum)
	}
}

// TestRetryOnceOnly: when the new connection is closed before an answer
// too, the request is the server's failure (reset), retried once and no
// more; a request on a fresh connection that is closed is never retried.
func TestRetryOnceOnly(t *testing.T) {
	srv := testutil.StartKeepAliveCloser(t, goodStream, false) // answers connection pre-warming only
	sum, recs := runSequential(t, srv, 3)
	retried := 0
	for _, r := range recs {
		if r.Error == nil || r.Error.Class != trace.ErrReset {
			t.Errorf("%s: error %v, want reset", r.ID, r.Error)
		}
		if strings.Contains(r.Notes, "retried once") {
			retried++
		}
	}
	// Only a request on the pre-warmed (reused) connection is retried; the
	// others, and the retry, went out on connections of their own. Each
	// request reached the server at most twice.
	if sum.Failed != 3 || sum.Retried != retried || retried > 1 || srv.Dropped.Load() != int64(3+retried) {
		t.Errorf("summary %q, %d retried notes, %d dropped", sum, retried, srv.Dropped.Load())
	}
}
