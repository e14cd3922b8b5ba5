//go:build unix

package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// The child of TestSIGKILLReplay: a replay (replay.Run, as the CLI calls
// it) against the parent's server, printing each record's id once the
// engine handed it to the trace writer. The parent kills it with SIGKILL.
const (
	killURLEnv   = "LLMREPLAY_REPLAY_KILL_URL"
	killTraceEnv = "LLMREPLAY_REPLAY_KILL_TRACE"
)

// killWorkload runs far longer than the test waits, so the kill always
// lands mid-run.
func killWorkload() *workload.Workload {
	return handWorkload(workload.Phase{Kind: workload.KindClosed, Concurrency: 8, Requests: 20000})
}

func killChildReplay(url, path string) {
	cfg := Config{
		Workload: killWorkload(), URL: url, API: "openai-chat", Model: "m", Label: "killed",
		// FlushInterval left at its default: the test checks the promise
		// as shipped (the first version's tests set it and missed that
		// the default never flushed).
		Trace: path, Salt: true, SaltSeed: 3, IdleTimeout: 5 * time.Second,
		OnRecord: func(r *trace.Record) {
			fmt.Printf("REC %s\n", r.ID)
		},
	}
	go func() { // in case the parent never kills
		time.Sleep(60 * time.Second)
		os.Exit(3)
	}()
	if _, err := Run(context.Background(), cfg); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	os.Exit(4)
}

func TestSIGKILLReplay(t *testing.T) {
	if url := os.Getenv(killURLEnv); url != "" {
		killChildReplay(url, os.Getenv(killTraceEnv))
	}
	if testing.Short() {
		t.Skip("kills a child replay after a few seconds")
	}
	var served atomic.Int64
	srv := &chatServer{gap: 2 * time.Millisecond, onRequest: func() { served.Add(1) }}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	path := filepath.Join(t.TempDir(), "killed.trace.zst")
	child := testutil.StartChild(t, "TestSIGKILLReplay", killURLEnv+"="+ts.URL, killTraceEnv+"="+path)

	type report struct {
		id string
		at time.Time
	}
	var reports []report
	var killedAt time.Time
	var first time.Time
	// A random moment 2–3.5 s into the run: past at least two flushes.
	after := 2*time.Second + time.Duration(rand.Int64N(int64(1500*time.Millisecond)))
	for id := range child.Reports("REC ") {
		now := time.Now()
		reports = append(reports, report{id, now})
		if first.IsZero() {
			first = now
		}
		if killedAt.IsZero() && now.Sub(first) >= after {
			child.Kill()
			killedAt = time.Now()
		}
	}
	if err := child.WaitKilled(); err != nil {
		t.Fatalf("%v (%d records reported)", err, len(reports))
	}

	r, err := trace.Open(path)
	if err != nil {
		t.Fatalf("the killed run's trace does not open: %v", err)
	}
	defer r.Close()
	if h := r.Header(); h.Label != "killed" || h.Model != "m" {
		t.Errorf("header %+v", h)
	}
	var got []string
	for r.Scan() {
		rec := r.Record()
		if rec.Error != nil {
			t.Errorf("%s failed before the kill: %+v", rec.ID, rec.Error)
		}
		got = append(got, rec.ID)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("the killed run's trace does not decode: %v (after %d records)", err, len(got))
	}
	// The writer keeps the engine's order, so the trace is a prefix of what
	// the child reported (plus at most the records written but not yet
	// printed when it died).
	for i := 0; i < min(len(got), len(reports)); i++ {
		if got[i] != reports[i].id {
			t.Fatalf("record %d is %s in the trace, %s in the child's report", i, got[i], reports[i].id)
		}
	}
	// Every record handed to the writer more than a flush interval (plus
	// slack for a loaded machine) before the kill is on disk.
	const promise, slack = time.Second, 500 * time.Millisecond
	mustHave := 0
	for _, rp := range reports {
		if killedAt.Sub(rp.at) > promise+slack {
			mustHave++
		}
	}
	if len(got) < mustHave {
		t.Errorf("the trace holds %d records; %d were written more than %v before the kill", len(got), mustHave, promise+slack)
	}
	if int64(len(got)) > served.Load() {
		t.Errorf("the trace holds %d records, the server only received %d", len(got), served.Load())
	}
	lostWindow := time.Duration(0)
	if len(got) > 0 && len(got) <= len(reports) {
		lostWindow = killedAt.Sub(reports[len(got)-1].at)
	}
	t.Logf("killed %v into the run: %d records reported, %d in the trace (truncated tail: %v), last kept record written %v before the kill; server received %d",
		killedAt.Sub(first).Round(time.Millisecond), len(reports), len(got), r.Truncated(), lostWindow.Round(time.Millisecond), served.Load())
}
