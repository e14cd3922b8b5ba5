package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
)

// Table is a rendered-independent table: the analysis fills it, a renderer
// (text, Markdown, CSV) prints it.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	// Notes are footnotes: warnings referenced by their [n] mark in cells.
	Notes []string
}

// TableOptions choose a view.
type TableOptions struct {
	// By are the row keys (default: concurrency).
	By []string
	// Metrics, when set, selects the metric view: one row per group, one
	// column per metric name (with its statistic suffix).
	Metrics []string
	// Raw prints plain numbers and separate _lo/_hi columns (CSV).
	Raw bool
}

// DefaultMetrics are the metric view's columns when none are named.
var DefaultMetrics = []string{"requests_ok", "requests_failed", "ttft_p50", "ttft_p99", "per_stream_tps",
	"aggregate_tps", "tpot_p50", "itl_p99", "e2e_p50", "speedup"}

// IsSeedView reports whether o asks for the seeds' comparison table.
func (o TableOptions) IsSeedView() bool {
	return len(o.Metrics) == 0 && (len(o.By) == 0 || len(o.By) == 1 && o.By[0] == analyze.KeyConcurrency)
}

// BuildTable builds the table view o asks for.
func BuildTable(res *analyze.Result, o TableOptions) (*Table, error) {
	if o.IsSeedView() {
		return seedTable(res, o), nil
	}
	ms := o.Metrics
	if len(ms) == 0 {
		ms = DefaultMetrics
	}
	for _, m := range ms {
		if _, _, err := analyze.LookupMetric(m); err != nil {
			return nil, err
		}
	}
	return metricTable(res, o, ms), nil
}

// notes numbers warnings for footnotes, one number per distinct
// (code, keys) so the same problem is not listed twice.
type notes struct {
	index map[string]int
	lines []string
}

func (n *notes) mark(ws []analyze.Warning) string {
	if len(ws) == 0 {
		return ""
	}
	var ids []string
	for _, w := range ws {
		id := w.Code + fmt.Sprint(sortedKV(w.Keys))
		k, ok := n.index[id]
		if !ok {
			k = len(n.lines) + 1
			n.index[id] = k
			n.lines = append(n.lines, fmt.Sprintf("[%d] %s %s: %s (%s)", k, w.Code, sortedKV(w.Keys), w.Message, evidenceText(w.Evidence)))
		}
		ids = append(ids, fmt.Sprint(k))
	}
	return " [" + strings.Join(ids, ",") + "]"
}

func sortedKV(m map[string]any) string {
	var parts []string
	for _, k := range analyze.Keys {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func evidenceText(ev map[string]any) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if rows, ok := ev[k].([]map[string]any); ok {
			// A per-value breakdown (errors_clustered's by_value) in plain
			// words, not Go's map syntax; JSON keeps the structure.
			parts = append(parts, byValueText(ev["key"], rows))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, ev[k]))
	}
	return strings.Join(parts, " ")
}

// byValueText renders rows {key: v, requests, failed, classes} as
// "input tokens 5000: 6 of 6 failed (http-status 6); …".
func byValueText(key any, rows []map[string]any) string {
	k, _ := key.(string)
	var out []string
	for _, r := range rows {
		line := fmt.Sprintf("%s %v: %v of %v failed", strings.ReplaceAll(k, "_", " "), r[k], r["failed"], r["requests"])
		if cl, ok := r["classes"].(map[string]int); ok && len(cl) > 0 {
			names := make([]string, 0, len(cl))
			for c := range cl {
				names = append(names, c)
			}
			sort.Strings(names)
			for i, c := range names {
				names[i] = fmt.Sprintf("%s %d", c, cl[c])
			}
			line += " (" + strings.Join(names, ", ") + ")"
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// seedTable is the seeds' comparison: one row per concurrency (and input
// length when there are several), one column per label holding
// "per-stream / aggregate tok/s", and the label's TTFT p50.
func seedTable(res *analyze.Result, o TableOptions) *Table {
	groups := res.Groups([]string{analyze.KeyConcurrency, analyze.KeyInputTokens})
	var labels []string
	seenL := map[string]bool{}
	type rowKey struct{ c, in int }
	var rows []rowKey
	seenR := map[rowKey]bool{}
	inputs := map[int]bool{}
	cell := map[string]map[rowKey]*analyze.Group{}
	for _, g := range groups {
		l := g.Keys[analyze.KeyLabel].(string)
		if !seenL[l] {
			seenL[l] = true
			labels = append(labels, l)
			cell[l] = map[rowKey]*analyze.Group{}
		}
		rk := rowKey{g.Keys[analyze.KeyConcurrency].(int), g.Keys[analyze.KeyInputTokens].(int)}
		inputs[rk.in] = true
		if !seenR[rk] {
			seenR[rk] = true
			rows = append(rows, rk)
		}
		cell[l][rk] = g
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].in != rows[j].in {
			return rows[i].in < rows[j].in
		}
		return rows[i].c < rows[j].c
	})
	t := &Table{Title: fmt.Sprintf("per-stream / aggregate output tok/s (definitions: %s)", res.Definitions.Name)}
	t.Columns = []string{"concurrency"}
	multiIn := len(inputs) > 1
	if multiIn {
		t.Columns = append(t.Columns, "input tokens")
	}
	for _, l := range labels {
		t.Columns = append(t.Columns, l, l+" TTFT p50 ms")
	}
	compare := len(labels) == 2
	if compare {
		t.Columns = append(t.Columns, "Δ per-stream", "Δ aggregate")
	}
	n := &notes{index: map[string]int{}}
	for _, rk := range rows {
		row := []string{fmt.Sprint(rk.c)}
		if multiIn {
			row = append(row, fmt.Sprint(rk.in))
		}
		for _, l := range labels {
			g := cell[l][rk]
			if g == nil {
				row = append(row, "—", "—")
				continue
			}
			ps, agg := g.Values["per_stream_tps"], g.Values["aggregate_tps"]
			text := analyze.FormatTPS(ps, o.Raw) + " / " + analyze.FormatTPS(agg, o.Raw)
			row = append(row, text+n.mark(g.Warnings), analyze.FormatMs(g.Values["ttft_p50"].Value, o.Raw))
		}
		if compare {
			a, b := cell[labels[0]][rk], cell[labels[1]][rk]
			row = append(row, delta(a, b, "per_stream_tps"), delta(a, b, "aggregate_tps"))
		}
		t.Rows = append(t.Rows, row)
	}
	for _, w := range res.Warnings {
		n.mark([]analyze.Warning{w})
	}
	t.Notes = n.lines
	t.Notes = append(t.Notes, "per-stream: median over requests; aggregate: median over runs (formulas: docs/METRICS.md, definition set "+res.Definitions.Name+"); ±: half-width of the 95% interval of the median, shown from 6 samples on")
	if compare {
		t.Notes = append(t.Notes, fmt.Sprintf("Δ: %s relative to %s; ~ means no significant difference (Mann-Whitney U, p > %.2f)", labels[1], labels[0], analyze.Alpha))
	}
	return t
}

// delta is benchstat's comparison cell: the change of the median, or "~"
// when the samples do not differ significantly.
func delta(a, b *analyze.Group, metric string) string {
	if a == nil || b == nil {
		return ""
	}
	va, vb := a.Values[metric], b.Values[metric]
	if !va.Valid() || !vb.Valid() || va.Value == 0 {
		return ""
	}
	sa, sb := a.Samples(metric), b.Samples(metric)
	p := analyze.MannWhitneyP(sa, sb)
	if sa == nil || sb == nil || p > analyze.Alpha {
		return fmt.Sprintf("~ (p=%.2f n=%d+%d)", p, len(sa), len(sb))
	}
	ps := fmt.Sprintf("p=%.3f", p)
	if p < 0.001 {
		ps = "p<0.001"
	}
	return fmt.Sprintf("%+.1f%% (%s n=%d+%d)", (vb.Value/va.Value-1)*100, ps, len(sa), len(sb))
}

// DefaultBy is the grouping of the metric table when TableOptions.By is
// empty (and the CLI's --by default).
func DefaultBy() []string { return []string{analyze.KeyConcurrency} }

// metricTable is one row per group and one column per metric.
func metricTable(res *analyze.Result, o TableOptions, metrics []string) *Table {
	by := o.By
	if len(by) == 0 {
		by = DefaultBy()
	}
	groups := res.Groups(by)
	keys := append([]string{analyze.KeyLabel}, analyze.WithoutLabel(by)...)
	t := &Table{Title: fmt.Sprintf("metrics by %s (definitions: %s; times in ms)", strings.Join(keys, ", "), res.Definitions.Name)}
	t.Columns = append(t.Columns, keys...)
	for _, m := range metrics {
		t.Columns = append(t.Columns, m)
		if o.Raw {
			t.Columns = append(t.Columns, m+"_lo", m+"_hi")
		}
	}
	if !o.Raw {
		t.Columns = append(t.Columns, "warnings")
	}
	n := &notes{index: map[string]int{}}
	for _, g := range groups {
		var row []string
		for _, k := range keys {
			row = append(row, fmt.Sprint(g.Keys[k]))
		}
		for _, m := range metrics {
			v := g.Values[m]
			if o.Raw {
				lo, hi := "", ""
				if v.HasInterval() {
					lo, hi = analyze.FormatNum(v.Lo, true), analyze.FormatNum(v.Hi, true)
				}
				row = append(row, analyze.FormatNum(v.Value, true), lo, hi)
				continue
			}
			row = append(row, analyze.FormatTPS(v, false))
		}
		if !o.Raw {
			row = append(row, strings.TrimSpace(n.mark(g.Warnings)))
		}
		t.Rows = append(t.Rows, row)
	}
	for _, w := range res.Warnings {
		n.mark([]analyze.Warning{w})
	}
	t.Notes = n.lines
	return t
}
