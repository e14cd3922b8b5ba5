package analyze

import (
	"bytes"
	"math"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
)

const msNs = int64(1_000_000)

// The pieces of hand-made traces are trace/tracetest's; analyze's
// headers carry the reference answer too.
var chunk, phase = tracetest.Chunk, tracetest.Phase

func phaseName(i int) string { return tracetest.Phase(i, 0, 0, 0, 0).Name }

func header(label string, phases ...trace.Phase) trace.Header {
	h := tracetest.Header(label, phases...)
	h.Reference = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10"
	return h
}

type testTrace struct {
	label   string
	h       trace.Header
	records []trace.Record
}

func analyzeTraces(t *testing.T, o Options, ts ...testTrace) *Result {
	t.Helper()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range ts {
		tracetest.AddAll(a.Trace(tt.label, "", tt.h), tt.records)
	}
	return a.Result()
}

// traceBytes is tt written as a trace file.
func traceBytes(t *testing.T, tt testTrace) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tt.h, trace.WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range tt.records {
		if err := w.Write(&tt.records[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b))
}

func wantValues(t *testing.T, g *Group, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		v, ok := g.Values[name]
		if !ok {
			t.Errorf("%v: no metric %s", g.Keys, name)
			continue
		}
		if !near(v.Value, w) {
			t.Errorf("%v: %s = %.9g, want %.9g", g.Keys, name, v.Value, w)
		}
	}
}

func findGroup(t *testing.T, gs []*Group, kv map[string]any) *Group {
	t.Helper()
	for _, g := range gs {
		ok := true
		for k, v := range kv {
			if g.Keys[k] != v {
				ok = false
			}
		}
		if ok {
			return g
		}
	}
	t.Fatalf("no group %v", kv)
	return nil
}

func hasWarning(ws []Warning, code string) *Warning {
	for i := range ws {
		if ws[i].Code == code {
			return &ws[i]
		}
	}
	return nil
}
