package replay_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// TestSessionsRate: a rate phase starts sessions at their offsets (the
// first turns' scheduled times are the workload's offsets from the phase
// start), each later turn is scheduled its think time after the previous
// answer ended, and the trace holds every turn in order.
func TestSessionsRate(t *testing.T) {
	srv := startSim(t, "fast", nil)
	wl := mustBuild(t, workload.BuildConfig{
		InputTokens: []int{100}, MaxTokens: 8, Schedule: "rate:20", Arrival: "constant",
		Sessions: 4, Turns: "3", ThinkTime: "20ms", Seed: 3,
	})
	sum, _, recs, _ := run(t, wl, srv.URL(), "openai-chat", nil)
	if sum.OK != 12 || sum.Failed != 0 || len(recs) != 12 {
		t.Fatalf("summary %s, %d records", sum, len(recs))
	}
	byID := map[string]trace.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	var start int64 = -1
	for _, w := range wl.Requests {
		r := byID[w.ID]
		if r.Session != w.Session || r.Turn != w.Turn {
			t.Fatalf("%s: session %q turn %d, want %q %d", w.ID, r.Session, r.Turn, w.Session, w.Turn)
		}
		if w.Turn == 1 {
			if start < 0 {
				start = r.Scheduled - w.Offset
			}
			if r.Scheduled-start != w.Offset {
				t.Errorf("%s: scheduled %d after the phase start, want its offset %d", w.ID, r.Scheduled-start, w.Offset)
			}
			continue
		}
		prev := byID[wl.Requests[w.Index-1].ID]
		if r.Scheduled != prev.Done+w.Think || w.Think != int64(20*time.Millisecond) {
			t.Errorf("%s: scheduled %d, want the previous answer's end %d + %d", w.ID, r.Scheduled, prev.Done, w.Think)
		}
		if r.Sent < prev.Done {
			t.Errorf("%s sent before its previous turn ended", w.ID)
		}
	}
}

// TestSessionsStopped: a run stopped mid-conversation, during a think time
// or with a turn in flight (cut at once: Grace 0), counts the turns it did
// not send as not sent (stopped), never as casualties of a failed turn.
func TestSessionsStopped(t *testing.T) {
	srv := startSim(t, "fast", func(c *sim.Config) { c.TokenInterval = 20 * time.Millisecond })
	for _, tc := range []struct {
		name   string
		think  string
		stopAt int // records written when the run is stopped
	}{{"thinking", "200ms", 2}, {"in flight", "0", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			wl := mustBuild(t, workload.BuildConfig{
				InputTokens: []int{100}, MaxTokens: 4, Schedule: "burst:2", Repeats: 1,
				Turns: "5", ThinkTime: tc.think, Seed: 3,
			})
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			cfg := replay.Config{
				Workload: wl, URL: srv.URL(), API: "openai-chat", Trace: filepath.Join(t.TempDir(), "s.trace.zst"),
				Timeout: 30 * time.Second,
				OnRecord: func(*trace.Record) {
					if n++; n == tc.stopAt {
						cancel()
					}
				},
			}
			sum, err := replay.Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", sum)
			if !sum.Stopped || sum.Sent+sum.NotSent != 10 || sum.NotSent < 2 || sum.SessionNotSent != 0 {
				t.Fatalf("summary %+v: want a stopped run whose sent and not-sent turns add up to 10, none not-sent for a failure", sum)
			}
		})
	}
}
