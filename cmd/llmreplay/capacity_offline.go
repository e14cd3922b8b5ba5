package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/report"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/capacity/live"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// capacityView is one capacity trace among analyze's or report's inputs,
// judged again (live.Reanalyse, the code 'capacity --from' runs) for the
// trace's own SLO or --capacity-slo.
type capacityView struct {
	Name string // the input as given (label=path or path)
	Path string
	// SLO is the SLO asked, before any simulator time scale.
	SLO capacity.SLO
	*live.Reanalysis
}

// capacityViews re-decides the capacity answer of every input that is a
// capacity trace. sloText empty means each trace's own SLO; good, when not
// zero, replaces the goodput bounds a goodput>=P% term counts against.
// Traces read from stdin cannot be read twice: they are named on errw.
// An --capacity-slo with no capacity trace among the inputs is an error.
func capacityViews(errw io.Writer, args []string, sloText string, good analyze.SLO) ([]capacityView, error) {
	var slo capacity.SLO
	if strings.TrimSpace(sloText) != "" {
		var err error
		if slo, err = capacity.ParseSLO(sloText); err != nil {
			return nil, sloFlagError("--capacity-slo", err)
		}
	}
	var views []capacityView
	for _, arg := range args {
		in := analyze.ParseInput(arg)
		if in.Path == "-" {
			if slo != nil {
				fmt.Fprintln(errw, "capacity: a trace read from stdin cannot be judged again: give it as a file")
			}
			continue
		}
		if !isCapacityTrace(in.Path) {
			continue
		}
		r, err := live.Reanalyse(in.Path, slo, good)
		if err != nil {
			if slo == nil {
				// Asked for nothing capacity-specific: the ordinary
				// analysis still stands; say why the section is missing.
				fmt.Fprintf(errw, "capacity: no answer for %s: %s\n", safetext.Show(arg), safetext.Show(err.Error()))
				continue
			}
			return nil, usageError(err)
		}
		asked := slo
		if asked == nil {
			asked, _ = capacity.ParseSLO(r.Header.Options[live.OptSLO])
		}
		views = append(views, capacityView{Name: arg, Path: in.Path, SLO: asked, Reanalysis: r})
	}
	if slo != nil && len(views) == 0 {
		return nil, usagef("--capacity-slo: none of the traces is a capacity trace (made by 'llmreplay capacity'): drop the flag or give such a trace")
	}
	return views, nil
}

// isCapacityTrace says whether path's header records a capacity search;
// a file that cannot be read is left to the analysis to report.
func isCapacityTrace(path string) bool {
	r, err := trace.Open(path)
	if err != nil {
		return false
	}
	defer r.Close()
	return r.Header().Options[live.OptAxis] != ""
}

// writeCapacityViews prints each view the way 'capacity --from' does,
// after analyze's table.
func writeCapacityViews(w io.Writer, views []capacityView, markdown bool) {
	for _, v := range views {
		fmt.Fprintln(w)
		if markdown {
			fmt.Fprintf(w, "### Capacity: %s\n\n```\n", safetext.Show(v.Name))
		} else {
			fmt.Fprintf(w, "capacity search in %s (re-decided from its probes, nothing sent):\n", safetext.Show(v.Name))
		}
		if v.Partial {
			fmt.Fprintln(w, "the trace is cut short (the run was stopped or crashed): its complete records are used")
		}
		writeCapacity(w, v.Result, v.Axis, v.SLO, v.Search, v.TimeScale)
		if markdown {
			fmt.Fprintln(w, "```")
		}
	}
}

// capacityAnswers are each view's answer lines alone: the answer or
// verdict, the knee, the saturation remark.
func capacityAnswers(views []capacityView) []string {
	var lines []string
	for _, v := range views {
		var b strings.Builder
		writeCapacity(&b, v.Result, v.Axis, v.SLO, v.Search, v.TimeScale)
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "max ") || strings.HasPrefix(l, "knee ") || strings.HasPrefix(l, "the server saturates") {
				lines = append(lines, "capacity ("+v.Name+", SLO "+sloText(v.SLO)+"): "+l)
			}
		}
	}
	return lines
}

// capacityVerdictLines writes the answer lines (csv mode puts them on
// stderr, beside the warnings, so stdout stays one table).
func capacityVerdictLines(w io.Writer, views []capacityView) {
	for _, l := range capacityAnswers(views) {
		fmt.Fprintln(w, safetext.Show(l))
	}
}

// Capacity answers in analyze's JSON document: NaN (no value) is null.
type capacityJSON struct {
	Trace      string              `json:"trace"`
	Axis       string              `json:"axis"`
	SLO        string              `json:"slo"`
	TimeScale  float64             `json:"time_scale"`
	ScaledSLO  string              `json:"slo_at_time_scale"`
	Outcome    string              `json:"outcome"`
	Answer     *float64            `json:"answer"`
	Interval   [2]*float64         `json:"interval"`
	Reason     string              `json:"reason,omitempty"`
	Knee       capacityKneeJSON    `json:"knee"`
	Requests   int                 `json:"requests"`
	Partial    bool                `json:"partial,omitempty"`
	Probes     []capacityProbeJSON `json:"probes"`
	TermsUnits map[string]string   `json:"term_units"`
}

type capacityKneeJSON struct {
	Found  bool     `json:"found"`
	X      *float64 `json:"x"`
	Lo     *float64 `json:"lo"`
	TPS    *float64 `json:"aggregate_tps"`
	MaxTPS *float64 `json:"max_aggregate_tps"`
	Reason string   `json:"reason,omitempty"`
}

type capacityProbeJSON struct {
	X        float64            `json:"x"`
	Requests int                `json:"requests"`
	Failed   int                `json:"failed"`
	Rounds   int                `json:"rounds"`
	Verdict  string             `json:"verdict"`
	TPS      *float64           `json:"aggregate_tps"`
	Terms    []capacityTermJSON `json:"terms"`
}

type capacityTermJSON struct {
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

func (v capacityView) json() capacityJSON {
	r := v.Result
	j := capacityJSON{Trace: v.Name, Axis: v.Axis, SLO: sloText(v.SLO), TimeScale: v.TimeScale, ScaledSLO: sloText(v.Search.SLO),
		Outcome: string(r.Outcome), Reason: r.Reason, Requests: r.Requests, Partial: v.Partial,
		TermsUnits: map[string]string{"latency": "ms", "goodput": "share of requests (0..1)"}}
	if r.Outcome != capacity.NoneMeets {
		j.Answer = jsonNum(r.Answer)
	}
	j.Interval = [2]*float64{jsonNum(r.Lo), jsonNum(r.Hi)}
	k := r.Knee
	j.Knee = capacityKneeJSON{Found: k.Found, Reason: k.Reason}
	if k.Found {
		j.Knee.X, j.Knee.Lo, j.Knee.TPS, j.Knee.MaxTPS = jsonNum(k.X), jsonNum(k.Lo), jsonNum(k.TPS), jsonNum(k.MaxTPS)
	}
	probes := append([]capacity.Probe(nil), r.Probes...)
	sortProbes(probes)
	for _, p := range probes {
		pj := capacityProbeJSON{X: p.X, Requests: p.Requests, Failed: p.Failed, Rounds: p.Rounds, Verdict: string(p.Verdict), TPS: jsonNum(p.TPS)}
		for i, t := range p.Terms {
			name := t.Term
			if i < len(v.Search.SLO) {
				name = v.Search.SLO[i].Metric + pct(v.Search.SLO[i])
			}
			pj.Terms = append(pj.Terms, capacityTermJSON{Term: name, Value: jsonNum(t.Value), Lo: jsonNum(t.Lo), Hi: jsonNum(t.Hi)})
		}
		j.Probes = append(j.Probes, pj)
	}
	return j
}

// writeAnalyzeJSON is analyze's document with, when the inputs hold
// capacity traces, a "capacity" list beside its fields (the document's
// own fields are unchanged).
func writeAnalyzeJSON(w io.Writer, doc *analyze.Document, views []capacityView) error {
	if len(views) == 0 {
		return analyze.WriteJSON(w, doc)
	}
	out := struct {
		*analyze.Document
		Capacity []capacityJSON `json:"capacity"`
	}{Document: doc}
	for _, v := range views {
		out.Capacity = append(out.Capacity, v.json())
	}
	// As analyze.WriteJSON: exact values, bidi and C1 controls as \u.
	enc := json.NewEncoder(safetext.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// capacityFlag registers --capacity-slo (analyze and report; their --slo
// is the goodput bounds).
func capacityFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "capacity-slo", "", "for capacity traces (made by 'llmreplay capacity'): decide the answer again for this SLO, e.g. 'ttft_p90<=500ms' (default: the SLO the trace recorded); nothing is sent")
}

// goodputOverride is analyze's --slo when given: the bounds a goodput>=P%
// capacity term counts against (otherwise the trace's own).
func goodputOverride(cmd *cobra.Command, text string) analyze.SLO {
	if !cmd.Flags().Changed("slo") {
		return analyze.SLO{}
	}
	s, err := analyze.ParseSLO(text)
	if err != nil {
		return analyze.SLO{}
	}
	return s
}

// capacityCharts are the report's charts of one capacity search: per SLO
// term its value at each probed level with the 99% interval, the bound as
// a line and the answer marked; then aggregate throughput against load
// with the knee marked. Every text from the trace is escaped by the
// report's writer.
func capacityCharts(r *capacity.Result, axis string, sc capacity.Config, suffix, name string) []report.Chart {
	probes := append([]capacity.Probe(nil), r.Probes...)
	sortProbes(probes)
	xl := "users (closed loop)"
	if axis == live.AxisRate {
		xl = "requests/s (open loop)"
	}
	of := ""
	if name != "" {
		of = " (" + name + ")"
	}
	nan := math.NaN()
	var charts []report.Chart
	for i, t := range sc.SLO {
		f, unit := 1.0, "ms"
		if t.Share {
			f, unit = 100, "% of requests good"
		}
		var pts, ans []report.Point
		for _, p := range probes {
			if i >= len(p.Terms) || math.IsNaN(p.Terms[i].Value) {
				continue
			}
			tr := p.Terms[i]
			pts = append(pts, report.Point{X: p.X, Y: f * tr.Value, Lo: f * tr.Lo, Hi: f * tr.Hi})
			if p.X == r.Answer && (r.Outcome == capacity.Found || r.Outcome == capacity.AllMeet) {
				ans = append(ans, report.Point{X: p.X, Y: f * tr.Value, Lo: nan, Hi: nan})
			}
		}
		if len(pts) == 0 {
			continue
		}
		bound := []report.Point{{X: pts[0].X, Y: f * t.Bound, Lo: nan, Hi: nan}, {X: pts[len(pts)-1].X, Y: f * t.Bound, Lo: nan, Hi: nan}}
		series := []report.Series{{Name: t.Metric + pct(t) + " (99% interval)", Points: pts}, {Name: "SLO bound " + sloText(capacity.SLO{t}), Points: bound}}
		if len(ans) > 0 {
			series = append(series, report.Series{Name: "answer", Points: ans})
		}
		charts = append(charts, report.Chart{ID: fmt.Sprintf("capacity%s-%d", suffix, i), Title: "Capacity search: " + t.Text + " at each probed level" + of,
			XLabel: xl, YLabel: unit, TickData: true, Series: series, Note: capacityNote(r, axis)})
	}
	var tps, knee []report.Point
	for _, p := range probes {
		if p.TPS > 0 {
			tps = append(tps, report.Point{X: p.X, Y: p.TPS, Lo: nan, Hi: nan})
		}
	}
	if len(tps) == 0 {
		return charts
	}
	series := []report.Series{{Name: "aggregate tok/s", Points: tps}}
	k := r.Knee
	note := "Knee: not found (" + k.Reason + ")."
	if k.Found {
		knee = append(knee, report.Point{X: k.X, Y: k.TPS, Lo: nan, Hi: nan})
		series = append(series, report.Series{Name: "knee", Points: knee})
		note = fmt.Sprintf("Knee: %g, the lowest level reaching 90%% of the highest throughput probed (%.0f of %.0f tok/s); past it, load adds waiting, not tokens.", k.X, k.TPS, k.MaxTPS)
		if k.Lo == 0 {
			note = fmt.Sprintf("Knee: at or below %g (%s).", k.X, k.Reason)
		}
	}
	charts = append(charts, report.Chart{ID: "capacity-throughput" + suffix, Title: "Capacity search: aggregate throughput at each probed level" + of,
		XLabel: xl, YLabel: "tok/s, all streams", TickData: true, Series: series, Note: note})
	return charts
}

// viewCharts are the charts of every view; the first keeps the plain ids.
func viewCharts(views []capacityView) []report.Chart {
	var charts []report.Chart
	for i, v := range views {
		suffix, name := "", ""
		if len(views) > 1 {
			name = v.Name
			if i > 0 {
				suffix = fmt.Sprintf("-%d", i)
			}
		}
		charts = append(charts, capacityCharts(v.Result, v.Axis, v.Search, suffix, name)...)
	}
	return charts
}
