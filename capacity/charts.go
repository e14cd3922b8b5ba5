package capacity

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/report"
	"github.com/llmreplay/llmreplay/internal/atomicfile"
)

// Charts are the report's charts of one search: per SLO term its value
// at each probed level with the 99% interval, the bound as a line and
// the answer marked; then aggregate throughput against load with the
// knee marked. suffix keeps the chart ids of several searches apart;
// name, when not empty, says which search a title is of. Every text from
// the trace is escaped by the report's writer.
func (a Answer) Charts(suffix, name string) []report.Chart {
	r, sc := a.Result, a.Search
	probes := sortedProbes(r)
	xl := "users (closed loop)"
	if a.Axis == AxisRate {
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
			if p.X == r.Answer && (r.Outcome == Found || r.Outcome == AllMeet) {
				ans = append(ans, report.Point{X: p.X, Y: f * tr.Value, Lo: nan, Hi: nan})
			}
		}
		if len(pts) == 0 {
			continue
		}
		bound := []report.Point{{X: pts[0].X, Y: f * t.Bound, Lo: nan, Hi: nan}, {X: pts[len(pts)-1].X, Y: f * t.Bound, Lo: nan, Hi: nan}}
		series := []report.Series{{Name: t.Name() + " (99% interval)", Points: pts}, {Name: "SLO bound " + SLO{t}.String(), Points: bound}}
		if len(ans) > 0 {
			series = append(series, report.Series{Name: "answer", Points: ans})
		}
		charts = append(charts, report.Chart{ID: fmt.Sprintf("capacity%s-%d", suffix, i), Title: "Capacity search: " + t.Text + " at each probed level" + of,
			XLabel: xl, YLabel: unit, TickData: true, Series: series, Note: a.Note()})
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

// ViewCharts are the charts of every view; the first keeps the plain ids.
func ViewCharts(views []View) []report.Chart {
	var charts []report.Chart
	for i, v := range views {
		suffix, name := "", ""
		if len(views) > 1 {
			name = v.Name
			if i > 0 {
				suffix = fmt.Sprintf("-%d", i)
			}
		}
		charts = append(charts, v.Charts(suffix, name)...)
	}
	return charts
}

// WriteReport writes the HTML report of the capacity trace at tracePath
// to path, with the search's charts first.
func WriteReport(path, tracePath string, a Answer) error {
	ar, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: tracePath})
	if err != nil {
		return err
	}
	var page strings.Builder
	if err := report.Write(&page, ar, report.Options{Title: "llmreplay capacity", When: time.Now().UTC().Format(time.RFC3339), Extra: a.Charts("", "")}); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(page.String()))
}
