package replay_test

import (
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

// TestSameInstantReleasedTogether: requests of a rate or log phase
// scheduled at one instant are built beforehand and released behind one
// gate: the dispatcher waits once per instant, not once per request,
// every request of an instant records that instant as its schedule, and
// none is lost. Counters and equalities, not clocks.
func TestSameInstantReleasedTogether(t *testing.T) {
	srv := startSim(t, "fast", nil)
	wl := mustBuild(t, workload.BuildConfig{
		Shape: workload.ShapeChat, InputTokens: []int{64}, MaxTokens: 4,
		Schedule: "rate:100", Arrival: "constant", Requests: 8, Repeats: 1, Seed: 3,
	})
	// Two instants, four requests each (as a request log's bursts).
	for i := range wl.Requests {
		wl.Requests[i].Offset = int64(i/4) * int64(20*time.Millisecond)
	}
	sum, _, recs, _ := run(t, wl, srv.URL(), "openai-chat", nil)
	if sum.OK != 8 || sum.NotSent != 0 {
		t.Fatalf("summary %s: want 8 ok", sum)
	}
	if sum.Dispatch.Waits != 2 {
		t.Errorf("the dispatcher waited %d times for 2 instants, want once per instant", sum.Dispatch.Waits)
	}
	if sum.DispatchPolicy == "" {
		t.Error("a rate phase's run names no dispatcher policy")
	}
	at := map[int64]int{}
	for _, r := range recs {
		if r.Sent < r.Scheduled {
			t.Errorf("request %s sent at %d before its schedule %d", r.ID, r.Sent, r.Scheduled)
		}
		at[r.Scheduled]++
	}
	if len(at) != 2 {
		t.Errorf("scheduled times %v: want 2 instants of 4 requests", at)
	}
	for s, n := range at {
		if n != 4 {
			t.Errorf("%d requests scheduled at %d, want 4", n, s)
		}
	}
}
