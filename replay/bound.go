package replay

import (
	"fmt"
	"time"

	"github.com/llmreplay/llmreplay/workload"
)

// boundOpenPhases applies Config.Duration: in each open-loop phase (rate,
// trace) only the requests the schedule puts before d from the phase's
// start are kept; the phase's request count becomes what is kept. The
// bound is applied to the schedule, not the clock, so it is the same on
// every run and every shard, and a client running late still sends what
// was due in time (its lateness is recorded as always). The trace header's
// phases then plan exactly what is sent: a time-bounded run is whole, not
// "stopped after n of N", and a run stopped by Ctrl-C within the bound is
// still seen as stopped.
//
// It returns the bounded workload (a copy; wl is not changed) and how many
// requests fall beyond the bound.
func boundOpenPhases(wl *workload.Workload, d time.Duration) (*workload.Workload, int, error) {
	open := map[int]bool{}
	for _, p := range wl.Header.Phases {
		if p.Kind == workload.KindRate || p.Kind == workload.KindTrace {
			open[p.Index] = true
		}
	}
	if len(open) == 0 {
		return nil, 0, fieldErr("Duration", "bounds rate and trace phases, and this workload has none", "drop it (burst and closed phases end when their requests do), or build a rate:R workload")
	}
	out := *wl
	out.Requests = make([]workload.Request, 0, len(wl.Requests))
	kept := map[int]int{}
	// A session is kept or dropped whole, by its first turn's offset (its
	// later turns have none: they follow their answers).
	keptSessions := map[int]int{}
	droppedSession := map[string]bool{}
	first := int64(-1)
	for _, r := range wl.Requests {
		if open[r.Phase] {
			if r.Turn > 1 {
				if droppedSession[r.Session] {
					continue
				}
			} else {
				if first < 0 || r.Offset < first {
					first = r.Offset
				}
				if r.Offset >= int64(d) {
					if r.Session != "" {
						droppedSession[r.Session] = true
					}
					continue
				}
				if r.Session != "" {
					keptSessions[r.Phase]++
				}
			}
		}
		kept[r.Phase]++
		out.Requests = append(out.Requests, r)
	}
	if len(out.Requests) == 0 {
		return nil, 0, fieldErr("Duration", fmt.Sprintf("%v leaves no request to send: the first is due %v after its phase starts", d, time.Duration(first)), "give a longer duration")
	}
	out.Header.Phases = append([]workload.Phase(nil), wl.Header.Phases...)
	for i, p := range out.Header.Phases {
		if open[p.Index] {
			out.Header.Phases[i].Requests = kept[p.Index]
			if p.Sessions > 0 {
				out.Header.Phases[i].Sessions = keptSessions[p.Index]
			}
		}
	}
	return &out, len(wl.Requests) - len(out.Requests), nil
}
