package progress

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// waitFor polls until the output matches: the display writes from its own
// goroutine; the deadline is generous for a loaded machine and is not what
// is tested.
func waitFor(t *testing.T, w *testutil.Buffer, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if rx.MatchString(w.String()) {
			return
		}
	}
	t.Fatalf("no output matching %q:\n%s", re, w.String())
}

var twoPhases = []workload.Phase{
	{Index: 0, Name: "burst-c2-in64-r1", Requests: 2},
	{Index: 1, Name: "burst-c3-in64-r1", Requests: 3},
}

func rec(phase int, failed bool, chunks ...trace.Chunk) *trace.Record {
	r := &trace.Record{Phase: phase, Chunks: chunks}
	if failed {
		r.Error = &trace.Error{Class: trace.ErrHTTPStatus}
	}
	return r
}

// Plain mode writes one line per phase when its last request is counted,
// with its own counts even when its records arrive after the next phase
// started (they pass through the trace writer first); a phase cut short
// gets its line at Close. Warm-up requests are not counted.
func TestPlainLinesCountByPhase(t *testing.T) {
	w := &testutil.Buffer{}
	d := New(context.Background(), Options{W: w, Interval: time.Hour})
	d.Record(&trace.Record{Warmup: true})
	d.Phase(0, twoPhases)
	d.Record(rec(0, false, trace.Chunk{Text: "a"}, trace.Chunk{Text: "b"}))
	d.Phase(1, twoPhases) // the engine moved on before phase 0's last record arrived
	d.Record(rec(0, true))
	d.Record(rec(1, false))
	d.Close()
	d.Close() // twice is harmless
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	want := []string{
		`^phase 1/2 burst-c2-in64-r1: 2 of 2 done, 1 failed, [0-9.]+ tok/s in \S+$`,
		`^phase 2/2 burst-c3-in64-r1: 1 of 3 done, 0 failed, [0-9.]+ tok/s in \S+$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("lines:\n%s", w.String())
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
}

// A status line comes every Interval while a phase runs, even when no
// request finishes; Ctrl-C (ctx ending) says how long the grace period
// leaves in-flight requests, and again when it is over.
func TestPlainStatusAndGrace(t *testing.T) {
	w := &testutil.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	d := New(ctx, Options{W: w, Interval: 10 * time.Millisecond, Grace: 50 * time.Millisecond})
	defer d.Close()
	d.Phase(0, twoPhases)
	d.Record(rec(0, true))
	waitFor(t, w, `(?m)^  phase 1/2 burst-c2-in64-r1: 1 of 2 done, 1 failed, .*; run 1 of 5 done, 1 failed, ETA \S+$`)
	cancel()
	waitFor(t, w, `(?m)^stopping: in-flight requests may finish for \S+ more \(grace 50ms\), then are cut$`)
	waitFor(t, w, `(?m)^stopping: grace over, cutting in-flight requests$`)
}

// The terminal display is mpb's bar with the phase, the counts, the rate
// and the time left, redrawn on its own; after Ctrl-C it counts down the
// grace period.
func TestTerminalBar(t *testing.T) {
	w := &testutil.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	d := New(ctx, Options{W: w, Terminal: true, Grace: time.Minute})
	d.Phase(0, twoPhases)
	// Redrawn although no request finished.
	waitFor(t, w, `phase 1/2 burst-c2-in64-r1 .*0/5 done, 0 failed, — tok/s, ETA —`)
	d.Record(rec(0, false, trace.Chunk{Tokens: 3}, trace.Chunk{Text: "x"}))
	d.Record(rec(0, true))
	d.Phase(1, twoPhases)
	waitFor(t, w, `phase 2/2 burst-c3-in64-r1 .*2/5 done, 1 failed, [0-9.]+ tok/s \(phase 1\), ETA \S+`)
	cancel()
	waitFor(t, w, `stopping: \S+ grace left, 2/5 done, 1 failed`)
	d.Close()
	if strings.Contains(w.String(), "\nphase 1/2 burst-c2-in64-r1: ") {
		t.Errorf("the terminal display also wrote plain lines:\n%s", w.String())
	}
}

// Quiet mode is a nil *Display: every method does nothing.
func TestNilDisplay(t *testing.T) {
	var d *Display
	d.Phase(0, twoPhases)
	d.Record(rec(0, false))
	d.Close()
}

func TestOutputTokens(t *testing.T) {
	// Server counts where sent (3 + 2), else one per chunk with text or
	// reasoning (1 + 1); a chunk with neither (the finish) counts nothing.
	r := rec(0, false, trace.Chunk{Tokens: 3}, trace.Chunk{Tokens: 2, Text: "ab"}, trace.Chunk{Text: "c"}, trace.Chunk{Reasoning: "r"}, trace.Chunk{})
	if n := outputTokens(r); n != 7 {
		t.Errorf("outputTokens = %d, want 3+2+1+1 = 7", n)
	}
}
