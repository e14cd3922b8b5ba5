package analyze

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/llmreplay/llmreplay/internal/safetext"
)

// SchemaName and SchemaVersion identify the JSON document `analyze --format
// json` writes. The version changes only when a field changes meaning or
// disappears; new fields may appear in any version (readers ignore unknown
// fields). docs/METRICS.md documents the schema.
const (
	SchemaName    = "llmreplay-analysis"
	SchemaVersion = 2
)

// MarshalJSON writes {"value": v, "lo": l, "hi": h, "n": n}; a value that
// could not be computed is null; lo and hi are present only when the
// statistic has an interval and are null on a side too few samples bound.
func (v Value) MarshalJSON() ([]byte, error) {
	b := []byte(`{"value":`)
	b = appendNum(b, v.Value)
	if v.HasInterval() {
		b = append(b, `,"lo":`...)
		b = appendNum(b, v.Lo)
		b = append(b, `,"hi":`...)
		b = appendNum(b, v.Hi)
	}
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, v.N, 10)
	return append(b, '}'), nil
}

func appendNum(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	// Whole numbers (counts, token totals) exactly; others to six
	// significant digits: more than any measurement here carries, and
	// stable across platforms (fused multiply-add) for golden files.
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.AppendInt(b, int64(x), 10)
	}
	return strconv.AppendFloat(b, x, 'g', 6, 64)
}

// Document is the JSON document of one analysis.
type Document struct {
	Schema      string            `json:"schema"`
	Version     int               `json:"version"`
	Definitions string            `json:"definitions"`
	SLO         map[string]any    `json:"slo"`
	By          []string          `json:"by"`
	Traces      []TraceInfo       `json:"traces"`
	Groups      []*Group          `json:"groups"`
	Warnings    []Warning         `json:"warnings"`
	Units       map[string]string `json:"units"`
	// PrefillScaling is how TTFT and prefill_tps scale with input length,
	// per label and concurrency that ran two input lengths or more.
	PrefillScaling []Scaling `json:"prefill_scaling"`
}

// NewDocument builds the JSON document for the given grouping.
func NewDocument(res *Result, by []string) *Document {
	groups := res.Groups(by)
	doc := &Document{
		Schema: SchemaName, Version: SchemaVersion, Definitions: res.Definitions.Name,
		SLO: sloJSON(res.SLO), By: append([]string{KeyLabel}, WithoutLabel(by)...),
		Traces: res.Traces, Groups: groups, Units: map[string]string{},
	}
	doc.Warnings = append(doc.Warnings, res.Warnings...)
	for _, g := range groups {
		for _, w := range g.Warnings {
			if w.Code != WarnSlowingDown { // already listed at trace level
				doc.Warnings = append(doc.Warnings, w)
			}
		}
	}
	if doc.Warnings == nil {
		doc.Warnings = []Warning{}
	}
	for _, m := range Metrics {
		doc.Units[m.Name] = m.Unit
	}
	doc.PrefillScaling = res.PrefillScaling()
	if doc.PrefillScaling == nil {
		doc.PrefillScaling = []Scaling{}
	}
	return doc
}

// WithoutLabel returns the grouping keys without the label, which every
// table shows as its columns rather than as a key.
func WithoutLabel(by []string) []string {
	var out []string
	for _, k := range by {
		if k != KeyLabel {
			out = append(out, k)
		}
	}
	return out
}

func sloJSON(s SLO) map[string]any {
	m := map[string]any{}
	add := func(k string, d time.Duration) {
		if d > 0 {
			m[k] = float64(d) / 1e6
		}
	}
	add("ttft_ms", s.TTFT)
	add("tpot_ms", s.TPOT)
	add("e2e_ms", s.E2E)
	return m
}

// WriteJSON writes doc indented, with a final newline. Labels and
// warnings hold the server's strings: exact for programs, with bidi and C1
// controls spelled as \u escapes for whoever reads the JSON on a terminal.
func WriteJSON(w io.Writer, doc *Document) error {
	enc := json.NewEncoder(safetext.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
