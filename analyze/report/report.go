// Package report renders an analysis as one self-contained HTML page:
// inline CSS and inline SVG charts drawn here, no script, no font, no
// network at view time, so the page reads the same when mailed or printed.
// It consumes the analyze core and render's tables and changes no number:
// every figure on the page is one the analysis computed.
//
// Every string that came from a trace (model, label, server, error class,
// warning text) goes through safetext.Show, as on a terminal, and then
// html/template, which escapes it for its context: a model named
// "<script>" is shown as text, and one holding a right-to-left override
// or an escape sequence shows them as \u202e and \x1b instead of
// reordering or hiding what the page says (HTML escaping leaves them).
package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/render"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// Options choose what the page shows beyond the analysis itself.
type Options struct {
	// Title heads the page; default "llmreplay report".
	Title string
	// When is the time the report was made, shown in the headline.
	When string
	// Timelines, when collected during the analysis (Timelines.Add as
	// analyze.Options.Records), draws one run per label and load level.
	Timelines *Timelines
	// Claims are check's verdicts to show (check --claims / report --claims).
	Claims []ClaimRow
	// Server, when collected during the analysis (ServerState.Add as
	// analyze.Options.Scrapes), draws the server's own state over time.
	Server *ServerState
	// Extra are charts the caller computed (capacity's curve with its SLO
	// line), drawn first.
	Extra []Chart
	// Answers are conclusions the caller decided from the traces
	// (capacity's answer, knee and verdict), shown in the headline in
	// words: they hold even when nothing could be charted.
	Answers []string
}

// ClaimRow is one claim's verdict as check prints it.
type ClaimRow struct {
	Claim, Verdict, Measured, Why string
}

// Series is one line of a chart: a label's medians with their intervals.
type Series struct {
	Name   string
	Points []Point
	// Label, when set, is the trace label the series belongs to: every
	// series of a label has its colour, on every chart. Without it a
	// series has a colour of its own.
	Label string
	// Variant tells a label's series apart by line style (p50 solid,
	// p90 dashed, p99 dotted), named in the legend.
	Variant string
}

// Point is one x with a value and, when known, its 95% interval.
type Point struct {
	X, Y, Lo, Hi float64
}

// Chart is one SVG chart's data; the page draws it and the browser test
// counts its series and points (data-series, data-points).
type Chart struct {
	ID     string
	Title  string
	XLabel string
	YLabel string
	// Unit is the unit of the values, named in the legend.
	Unit string
	// TickData puts x ticks at the measured x values (when few).
	TickData bool
	Series   []Series
	Note     string
}

// page is everything the template prints, in the order a reader needs
// it: what went wrong with the input, the answers (capacity, claims' verdicts,
// the summary and the warnings that change its reading), then the charts
// and timelines, then what was measured and the tables to copy from.
type page struct {
	Title     string
	When      string
	Traces    []analyze.TraceInfo
	Warnings  []warning
	Problems  []string
	Answers   []string
	Summary   *summary
	Charts    []template.HTML
	Timelines []template.HTML
	Claims    []ClaimRow
	Tables    []*render.Table
}

// summary is render's summary as the page shows it: a card per label and
// level, coloured as the label's lines on the charts.
type summary struct {
	Percentiles []string
	Cards       []card
	Notes       []string
	Legend      string
}

type card struct {
	render.SummaryBlock
	Colour int
}

// RunsText counts the card's runs in words.
func (c card) RunsText() string {
	if c.Runs == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", c.Runs)
}

type warning struct {
	ID       string
	Code     string
	Message  string
	Where    string
	Evidence string
}

// Write renders res as one HTML page on w.
func Write(w io.Writer, res *analyze.Result, o Options) error {
	p, err := build(res, o)
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, p)
}

// xKey picks the sweep's x axis: concurrency unless the trace sweeps input
// length at one concurrency (a long-input sweep), then input tokens.
func xKey(res *analyze.Result) (string, string) {
	conc, inputs, rates := map[any]bool{}, map[any]bool{}, map[float64]bool{}
	for _, g := range res.Groups([]string{analyze.KeyConcurrency, analyze.KeyRate, analyze.KeyInputTokens}) {
		conc[g.Keys[analyze.KeyConcurrency]] = true
		inputs[g.Keys[analyze.KeyInputTokens]] = true
		if r, ok := render.KeyNumber(g.Keys[analyze.KeyRate]); ok && r > 0 {
			rates[r] = true
		}
	}
	switch {
	case len(rates) > 1 || (len(rates) == 1 && len(inputs) <= 1):
		// Open-loop phases: their load is the arrival rate, and their
		// "concurrency" is not a setting.
		return analyze.KeyRate, "request rate (requests/s)"
	case len(conc) <= 1 && len(inputs) > 1:
		return analyze.KeyInputTokens, "input length (tokens)"
	}
	return analyze.KeyConcurrency, "concurrency (streams)"
}

// metricSeries is one series per label of metric (a Values key) against x.
func metricSeries(groups []*analyze.Group, x, metric, suffix string) []Series {
	byLabel := map[string]*Series{}
	var order []string
	for _, g := range groups {
		label := fmt.Sprint(g.Keys[analyze.KeyLabel])
		xv, ok := render.KeyNumber(g.Keys[x])
		if !ok {
			continue
		}
		v, ok := g.Values[metric]
		if !ok || !v.Valid() || math.IsInf(v.Value, 0) {
			continue
		}
		s := byLabel[label]
		if s == nil {
			s = &Series{Name: label + suffix, Label: label, Variant: strings.TrimSpace(suffix)}
			byLabel[label] = s
			order = append(order, label)
		}
		p := Point{X: xv, Y: v.Value, Lo: math.NaN(), Hi: math.NaN()}
		if v.HasInterval() && !math.IsInf(v.Lo, 0) && !math.IsInf(v.Hi, 0) {
			p.Lo, p.Hi = v.Lo, v.Hi
		}
		s.Points = append(s.Points, p)
	}
	out := make([]Series, 0, len(order))
	for _, l := range order {
		s := byLabel[l]
		sort.Slice(s.Points, func(i, j int) bool { return s.Points[i].X < s.Points[j].X })
		out = append(out, *s)
	}
	return out
}

// quantileCDF draws a label's distribution of metric from the quantiles the
// analysis keeps (min, p10, p50, p90, p99, max): a coarse CDF, said so on
// the chart, because per-token values are folded into histograms.
func quantileCDF(groups []*analyze.Group, metric string) []Series {
	stats := []struct {
		key string
		q   float64
	}{{"_min", 0}, {"_p10", 0.10}, {"_p50", 0.50}, {"_p90", 0.90}, {"_p99", 0.99}, {"_max", 1}}
	var out []Series
	for _, g := range groups {
		l := fmt.Sprint(g.Keys[analyze.KeyLabel])
		s := Series{Name: l, Label: l}
		for _, st := range stats {
			v, ok := g.Values[metric+st.key]
			if !ok || !v.Valid() || math.IsInf(v.Value, 0) {
				continue
			}
			s.Points = append(s.Points, Point{X: v.Value, Y: st.q, Lo: math.NaN(), Hi: math.NaN()})
		}
		if len(s.Points) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func build(res *analyze.Result, o Options) (*page, error) {
	p := &page{Title: o.Title, When: o.When, Traces: res.Traces, Claims: o.Claims, Answers: o.Answers}
	if p.Title == "" {
		p.Title = "llmreplay report"
	}
	// One colour per label, the same on every chart and summary card.
	colours := map[string]int{}
	for _, t := range res.Traces {
		if _, ok := colours[t.Label]; !ok {
			colours[t.Label] = len(colours)
		}
	}
	for _, t := range o.Timelines.list() {
		p.Timelines = append(p.Timelines, drawTimeline(t))
	}
	x, xlabel := xKey(res)
	by := []string{analyze.KeyLabel, x}
	groups := res.Groups(by)

	ws := analyze.AllWarnings(res, []string{x})
	for i, w := range ws {
		p.Warnings = append(p.Warnings, warning{
			ID: fmt.Sprintf("w%d", i+1), Code: w.Code, Message: w.Message,
			Where: kv(w.Keys), Evidence: render.EvidenceText(w.Evidence),
		})
	}
	p.Problems = problems(res, groups)
	ok := 0.0
	for _, g := range groups {
		ok += g.Values["requests_ok"].Value
	}
	sum := render.BuildSummary(res, render.SummaryOptions{By: []string{x}})
	p.Summary = &summary{Percentiles: sum.Percentiles, Notes: sum.Notes, Legend: sum.Legend}
	for _, b := range sum.Blocks {
		p.Summary.Cards = append(p.Summary.Cards, card{SummaryBlock: b, Colour: colours[b.Label] % 8})
	}

	if ok > 0 {
		charts := []Chart{
			{ID: "sweep-per-stream", Title: "Per-stream speed (median, 95% interval)", XLabel: xlabel, YLabel: "tok/s per stream", Unit: "output tok/s per stream", TickData: true,
				Series: metricSeries(groups, x, "per_stream_tps", "")},
			{ID: "sweep-aggregate", Title: "Aggregate throughput (median of runs, 95% interval)", XLabel: xlabel, YLabel: "tok/s, all streams", Unit: "output tok/s, all streams", TickData: true,
				Series: metricSeries(groups, x, "aggregate_tps", "")},
		}
		var ttft []Series
		for _, st := range []string{"p50", "p90", "p99"} {
			ttft = append(ttft, metricSeries(groups, x, "ttft_"+st, " "+st)...)
		}
		charts = append(charts, Chart{ID: "ttft", Title: "Time to first token (p50, p90, p99)", XLabel: xlabel, YLabel: "ms", Unit: "ms", Series: ttft, TickData: true})
		labelGroups := res.Groups([]string{analyze.KeyLabel})
		charts = append(charts,
			Chart{ID: "cdf-itl", Title: "Inter-token latency distribution per label", XLabel: "ms", YLabel: "fraction ≤ x", Unit: "ms (x), fraction of gaps (y)",
				Series: quantileCDF(labelGroups, "itl"), Note: "Drawn through the min, p10, p50, p90, p99 and max the analysis keeps, not every token."},
			Chart{ID: "cdf-tpot", Title: "Time per output token distribution per label", XLabel: "ms", YLabel: "fraction ≤ x", Unit: "ms (x), fraction of requests (y)",
				Series: quantileCDF(labelGroups, "tpot"), Note: "Drawn through the min, p10, p50, p90, p99 and max the analysis keeps."},
		)
		charts = append(append(o.Extra, charts...), o.Server.charts()...)
		for _, c := range charts {
			p.Charts = append(p.Charts, drawChart(c, colours))
		}
	}

	seed, err := render.BuildTable(res, render.TableOptions{By: []string{x}, Metrics: nil})
	if err != nil {
		return nil, err
	}
	if x != analyze.KeyConcurrency {
		seed, err = render.BuildTable(res, render.TableOptions{By: []string{x}, Metrics: render.DefaultMetrics})
		if err != nil {
			return nil, err
		}
	}
	p.Tables = append([]*render.Table{seed}, render.EveryMetric(res, x)...)
	p.show()
	return p, nil
}

// problems says what is wrong with the input instead of drawing empty
// charts: truncated traces, different workloads compared, failures,
// nothing measured.
func problems(res *analyze.Result, groups []*analyze.Group) []string {
	var out []string
	ok, failed := 0.0, 0.0
	mixed := map[string]bool{}
	for _, g := range groups {
		ok += g.Values["requests_ok"].Value
		failed += g.Values["requests_failed"].Value
	}
	for _, t := range res.Traces {
		mixed[t.WorkloadDigest] = true
		if t.Truncated {
			out = append(out, fmt.Sprintf("Trace %q ends mid-record (truncated tail): the report shows the records before the cut.", t.Label))
		}
	}
	if len(mixed) > 1 {
		out = append(out, fmt.Sprintf("The traces replayed %d different workloads: labels are compared across different requests.", len(mixed)))
	}
	if failed > 0 && ok > 0 {
		byClass := map[string]int{}
		for _, g := range groups {
			for c, n := range g.FailedByClass {
				byClass[c] += n
			}
		}
		out = append(out, fmt.Sprintf("%.0f requests failed (%s); the summary and tables count them per level.", failed, kv(toAny(byClass))))
	}
	switch {
	case ok == 0 && failed == 0:
		out = append(out, "The traces hold no measured request: there is nothing to chart.")
	case ok == 0:
		out = append(out, fmt.Sprintf("Every one of the %.0f requests failed: no speed can be charted; the failures by class are in the summary below.", failed))
	case ok == 1:
		out = append(out, "Only one request succeeded: the charts show single values without intervals.")
	}
	return out
}

// show passes every string the page template prints through
// safetext.Show. It works on copies: res.Traces and the options belong to
// the caller. Charts and timelines are template.HTML, escaped as they are
// drawn (esc).
func (p *page) show() {
	p.Title, p.When = safetext.Show(p.Title), safetext.Show(p.When)
	p.Problems, p.Answers = showAll(p.Problems), showAll(p.Answers)
	p.Traces = append([]analyze.TraceInfo(nil), p.Traces...)
	for i := range p.Traces {
		showFields(&p.Traces[i])
	}
	for i := range p.Warnings {
		showFields(&p.Warnings[i])
	}
	p.Claims = append([]ClaimRow(nil), p.Claims...)
	for i := range p.Claims {
		showFields(&p.Claims[i])
	}
	for i, t := range p.Tables {
		p.Tables[i] = render.Escaped(t, safetext.Show)
	}
	if s := p.Summary; s != nil {
		s.Notes, s.Legend = showAll(s.Notes), safetext.Show(s.Legend)
		for i := range s.Cards {
			b := &s.Cards[i].SummaryBlock
			showFields(b)
			b.Warnings = showAll(b.Warnings)
			rows := make([]render.SummaryRow, len(b.Latencies))
			for j, r := range b.Latencies {
				rows[j] = render.SummaryRow{Name: safetext.Show(r.Name), Cells: showAll(r.Cells)}
			}
			b.Latencies = rows
		}
	}
}

func showAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safetext.Show(s)
	}
	return out
}

// showFields escapes every string field of the struct *v, so a field the
// template starts printing later (TraceInfo has many) is escaped without
// anyone having to remember it. Fields of other types are left alone.
func showFields(v any) {
	s := reflect.ValueOf(v).Elem()
	for i := range s.NumField() {
		if f := s.Field(i); f.Kind() == reflect.String && f.CanSet() {
			f.SetString(safetext.Show(f.String()))
		}
	}
}

// esc escapes a string from a trace for the SVG drawn by hand: Show's
// visible escapes for control and bidirectional characters, then HTML's.
func esc(s string) string { return template.HTMLEscapeString(safetext.Show(s)) }

func kv(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func toAny(m map[string]int) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// DefaultName is the page's file name when the caller names none.
const DefaultName = "report.html"

// DefaultPath is where the page of the traces goes when no output is
// named: report.html beside the first trace (arg as analyze reads it,
// label=path or a path), or in the working folder when the trace comes
// from standard input.
func DefaultPath(arg string) string {
	in := analyze.ParseInput(arg)
	if in.Path == "" || in.Path == "-" {
		return DefaultName
	}
	return filepath.Join(filepath.Dir(in.Path), DefaultName)
}
