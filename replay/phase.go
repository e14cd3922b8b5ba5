package replay

import (
	"context"

	"github.com/llmreplay/llmreplay/workload"
)

// phaseKind runs the requests of one phase. Each schedule kind is one type
// in a file of its own (k6's one executor per file): a new kind (sessions,
// say) is a new file and a line in phaseKindOf, not a branch in the engine.
type phaseKind interface {
	run(ctx context.Context, e *engine, ph workload.Phase, rs []*workload.Request)
}

var (
	_ phaseKind = burstPhase{}
	_ phaseKind = closedPhase{}
	_ phaseKind = openPhase{}
)

// phaseKindOf returns the runner of a workload phase kind. Unknown kinds
// cannot reach here (the workload decoder refuses them) but run as bursts,
// the first version's behaviour.
func phaseKindOf(kind string) phaseKind {
	switch kind {
	case workload.KindClosed:
		return closedPhase{}
	case workload.KindRate, workload.KindTrace:
		return openPhase{}
	default:
		return burstPhase{}
	}
}
