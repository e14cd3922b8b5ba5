package claim

import (
	"math"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
)

// Hand-made traces for claim checks, built through analyze's public API
// (the analyze package's own tests use unexported helpers of their own).

const msNs = int64(1_000_000)

var chunk, phase, header = tracetest.Chunk, tracetest.Phase, tracetest.Header

type testTrace struct {
	label   string
	h       trace.Header
	records []trace.Record
}

func analyzeTraces(t *testing.T, o analyze.Options, ts ...testTrace) *analyze.Result {
	t.Helper()
	a, err := analyze.New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range ts {
		tracetest.AddAll(a.Trace(tt.label, "", tt.h), tt.records)
	}
	return a.Result()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
