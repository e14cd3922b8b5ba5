package claim

import (
	"math"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
)

// Hand-made traces for claim checks, built through analyze's public API
// (the analyze package's own tests use unexported helpers of their own).

const msNs = int64(1_000_000)

// chunk is a content chunk at tMs milliseconds.
func chunk(tMs float64, text string, tokens int) trace.Chunk {
	return trace.Chunk{T: int64(tMs * float64(msNs)), Bytes: 40 + len(text), Text: text, Tokens: tokens}
}

func phase(i, conc, input, max, repeat int) trace.Phase {
	return trace.Phase{Index: i, Name: "p" + string(rune('0'+i)), Kind: "burst", Concurrency: conc, InputTokens: input, MaxTokens: max, Repeat: repeat}
}

func header(label string, phases ...trace.Phase) trace.Header {
	return trace.Header{Format: trace.FormatName, Major: 1, Label: label, Tokenizer: "o200k_base",
		WorkloadDigest: "sha256:w1", Model: "m1", Phases: phases}
}

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
		acc := a.Trace(tt.label, "", tt.h)
		for i := range tt.records {
			acc.Add(&tt.records[i])
		}
	}
	return a.Result()
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }
