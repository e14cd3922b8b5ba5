package live

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestEndedSaysWhereTheRoundsAre: a run's ending names the trace that
// holds the finished rounds when one was written, says a stop as
// Stopped, and otherwise is the search's own verdict.
func TestEndedSaysWhereTheRoundsAre(t *testing.T) {
	dir := t.TempDir()
	written := filepath.Join(dir, "w.capacity.trace.zst")
	testutil.WriteFile(t, written, []byte("rounds"))
	empty := filepath.Join(dir, "e.capacity.trace.zst")
	testutil.WriteFile(t, empty, nil)
	cut := errors.New("server went away")
	for _, c := range []struct {
		name        string
		trace       string
		outcome     capacity.Outcome
		err         error
		stopped     bool
		want        string
		wantStopped bool
	}{
		{"answered", written, capacity.Found, nil, false, "", false},
		{"budget", written, capacity.Budget, nil, false, "could not determine the capacity: why", false},
		{"stopped, rounds kept", written, capacity.Found, cut, true, "stopped: " + written + " holds every probe round that finished", true},
		{"stopped before a round", empty, capacity.Found, cut, true, "stopped before any probe round finished: no trace written", true},
		{"failed", written, capacity.Found, cut, false, "server went away (the trace " + written + " holds every probe round that finished)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Trace: c.trace, Result: &capacity.Result{Outcome: c.outcome, Reason: "why"}}
			end := r.Ended(c.err, c.stopped)
			got := ""
			if end != nil {
				got = end.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			var st Stopped
			if errors.As(end, &st) != c.wantStopped {
				t.Errorf("Stopped: %v, want %v", errors.As(end, &st), c.wantStopped)
			}
		})
	}
}
