package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// View is one recorded search among analyze's or report's inputs, judged
// again: Name is the input as given (label=path or path), Partial says
// the trace was cut short.
type View struct {
	Name string
	Answer
	Partial bool
}

// WriteViews writes each view as 'capacity --from' does, after analyze's
// table; markdown puts each in a fenced block under a heading.
func WriteViews(w io.Writer, views []View, markdown bool) {
	for _, v := range views {
		fmt.Fprintln(w)
		if markdown {
			fmt.Fprintf(w, "### Capacity: %s\n\n```\n", safetext.Show(v.Name))
		} else {
			fmt.Fprintf(w, "capacity search in %s (re-decided from its probes, nothing sent):\n", safetext.Show(v.Name))
		}
		if v.Partial {
			fmt.Fprintln(w, PartialNote)
		}
		v.WriteText(w)
		if markdown {
			fmt.Fprintln(w, "```")
		}
	}
}

// PartialNote is what a cut-short capacity trace's answer is prefaced with.
const PartialNote = "the trace is cut short (the run was stopped or crashed): its complete records are used"

// ViewLines are every view's answer lines (Answer.Lines).
func ViewLines(views []View) []string {
	var lines []string
	for _, v := range views {
		lines = append(lines, v.Lines(v.Name)...)
	}
	return lines
}

// WriteViewLines writes the answer lines escaped, one a line (analyze's
// csv mode puts them on stderr, beside the warnings, so stdout stays one
// table).
func WriteViewLines(w io.Writer, views []View) {
	for _, l := range ViewLines(views) {
		fmt.Fprintln(w, safetext.Show(l))
	}
}

// JSON is an answer in analyze's JSON document: NaN (no value) is null.
type JSON struct {
	Trace      string            `json:"trace"`
	Axis       string            `json:"axis"`
	SLO        string            `json:"slo"`
	TimeScale  float64           `json:"time_scale"`
	ScaledSLO  string            `json:"slo_at_time_scale"`
	Outcome    string            `json:"outcome"`
	Answer     *float64          `json:"answer"`
	Interval   [2]*float64       `json:"interval"`
	Reason     string            `json:"reason,omitempty"`
	Knee       KneeJSON          `json:"knee"`
	Requests   int               `json:"requests"`
	Partial    bool              `json:"partial,omitempty"`
	Probes     []ProbeJSON       `json:"probes"`
	TermsUnits map[string]string `json:"term_units"`
}

// KneeJSON is the knee in JSON.
type KneeJSON struct {
	Found  bool     `json:"found"`
	X      *float64 `json:"x"`
	Lo     *float64 `json:"lo"`
	TPS    *float64 `json:"aggregate_tps"`
	MaxTPS *float64 `json:"max_aggregate_tps"`
	Reason string   `json:"reason,omitempty"`
}

// ProbeJSON is one probed level in JSON.
type ProbeJSON struct {
	X        float64    `json:"x"`
	Requests int        `json:"requests"`
	Failed   int        `json:"failed"`
	Rounds   int        `json:"rounds"`
	Verdict  string     `json:"verdict"`
	TPS      *float64   `json:"aggregate_tps"`
	Terms    []TermJSON `json:"terms"`
}

// TermJSON is one SLO term at one level in JSON (milliseconds, or a
// share from 0 to 1).
type TermJSON struct {
	Term  string   `json:"term"`
	Value *float64 `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
}

func jsonNum(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// JSON is the view as analyze's JSON document lists it.
func (v View) JSON() JSON {
	r := v.Result
	j := JSON{Trace: v.Name, Axis: v.Axis, SLO: v.SLO.String(), TimeScale: v.TimeScale, ScaledSLO: v.Search.SLO.String(),
		Outcome: string(r.Outcome), Reason: r.Reason, Requests: r.Requests, Partial: v.Partial,
		TermsUnits: map[string]string{"latency": "ms", "goodput": "share of requests (0..1)"}}
	if r.Outcome != NoneMeets {
		j.Answer = jsonNum(r.Answer)
	}
	j.Interval = [2]*float64{jsonNum(r.Lo), jsonNum(r.Hi)}
	k := r.Knee
	j.Knee = KneeJSON{Found: k.Found, Reason: k.Reason}
	if k.Found {
		j.Knee.X, j.Knee.Lo, j.Knee.TPS, j.Knee.MaxTPS = jsonNum(k.X), jsonNum(k.Lo), jsonNum(k.TPS), jsonNum(k.MaxTPS)
	}
	for _, p := range sortedProbes(r) {
		pj := ProbeJSON{X: p.X, Requests: p.Requests, Failed: p.Failed, Rounds: p.Rounds, Verdict: string(p.Verdict), TPS: jsonNum(p.TPS)}
		for i, t := range p.Terms {
			name := t.Term
			if i < len(v.Search.SLO) {
				name = v.Search.SLO[i].Name()
			}
			pj.Terms = append(pj.Terms, TermJSON{Term: name, Value: jsonNum(t.Value), Lo: jsonNum(t.Lo), Hi: jsonNum(t.Hi)})
		}
		j.Probes = append(j.Probes, pj)
	}
	return j
}

// WriteAnalyzeJSON writes analyze's document with, when the inputs hold
// capacity traces, a "capacity" list beside its fields (the document's
// own fields are unchanged).
func WriteAnalyzeJSON(w io.Writer, doc *analyze.Document, views []View) error {
	if len(views) == 0 {
		return analyze.WriteJSON(w, doc)
	}
	out := struct {
		*analyze.Document
		Capacity []JSON `json:"capacity"`
	}{Document: doc}
	for _, v := range views {
		out.Capacity = append(out.Capacity, v.JSON())
	}
	// As analyze.WriteJSON: exact values, bidi and C1 controls as \u.
	enc := json.NewEncoder(safetext.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
