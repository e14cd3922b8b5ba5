package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

func TestBoundOpenPhases(t *testing.T) {
	ms := int64(time.Millisecond)
	wl := &workload.Workload{
		Header: workload.Header{Phases: []workload.Phase{
			{Index: 0, Kind: workload.KindBurst, Concurrency: 2, Requests: 2},
			{Index: 1, Kind: workload.KindRate, Rate: 10, Requests: 4},
			{Index: 2, Kind: workload.KindTrace, Requests: 3},
		}},
		Requests: []workload.Request{
			{ID: "b0", Phase: 0}, {ID: "b1", Phase: 0},
			{ID: "r0", Phase: 1, Offset: 0}, {ID: "r1", Phase: 1, Offset: 100 * ms}, {ID: "r2", Phase: 1, Offset: 200 * ms}, {ID: "r3", Phase: 1, Offset: 300 * ms},
			{ID: "t0", Phase: 2, Offset: 50 * ms}, {ID: "t1", Phase: 2, Offset: 250 * ms}, {ID: "t2", Phase: 2, Offset: 199 * ms},
		},
	}
	// Bounded at 200 ms: offsets < 200 ms stay (200 ms itself is "at the
	// bound", not before it). Burst phases are untouched.
	got, beyond, err := boundOpenPhases(wl, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got.Requests {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "b0,b1,r0,r1,t0,t2" || beyond != 3 {
		t.Errorf("kept %v, beyond %d; want b0,b1,r0,r1,t0,t2 and 3", ids, beyond)
	}
	if n := []int{got.Header.Phases[0].Requests, got.Header.Phases[1].Requests, got.Header.Phases[2].Requests}; n[0] != 2 || n[1] != 2 || n[2] != 2 {
		t.Errorf("planned requests per phase %v, want [2 2 2]", n)
	}
	if wl.Header.Phases[1].Requests != 4 || len(wl.Requests) != 9 {
		t.Error("the caller's workload was changed")
	}
	// Only open-loop phases, all due after the bound: nothing to send.
	late := &workload.Workload{Header: workload.Header{Phases: []workload.Phase{{Index: 0, Kind: workload.KindTrace, Requests: 1}}},
		Requests: []workload.Request{{ID: "t", Offset: 2 * int64(time.Second)}}}
	if _, _, err := boundOpenPhases(late, time.Second); err == nil || !strings.Contains(err.Error(), "leaves no request to send: the first is due 2s after") {
		t.Errorf("err = %v", err)
	}
	burst := &workload.Workload{Header: workload.Header{Phases: []workload.Phase{{Index: 0, Kind: workload.KindBurst, Requests: 1}}}, Requests: []workload.Request{{ID: "b"}}}
	if _, _, err := boundOpenPhases(burst, time.Second); err == nil || !strings.Contains(err.Error(), "has none") {
		t.Errorf("err = %v", err)
	}
}

// TestBoundOpenPhasesSessions: --duration keeps or drops a session whole,
// by its first turn's offset (later turns have none: they follow their
// answers), and the phase's session count follows.
func TestBoundOpenPhasesSessions(t *testing.T) {
	wl, err := workload.Build(workload.BuildConfig{InputTokens: []int{64}, Schedule: "rate:10", Arrival: "constant", Sessions: 5, Turns: "3"})
	if err != nil {
		t.Fatal(err)
	}
	// Sessions start at 0, 100, 200, 300, 400 ms: 250 ms keeps three.
	got, beyond, err := boundOpenPhases(wl, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 9 || beyond != 6 || got.Header.Phases[0].Sessions != 3 || got.Header.Phases[0].Requests != 9 {
		t.Fatalf("kept %d requests (beyond %d), phase %+v; want 9 in 3 sessions", len(got.Requests), beyond, got.Header.Phases[0])
	}
	for _, r := range got.Requests {
		if r.Session != "p000-s0000" && r.Session != "p000-s0001" && r.Session != "p000-s0002" {
			t.Fatalf("kept a turn of %s", r.Session)
		}
	}
}
