package render

import (
	"fmt"
	"math"

	"github.com/llmreplay/llmreplay/analyze"
)

// everyMetricColumns bounds the levels of one every-metric table, so a
// table fits a page (1280 px, or A4 in print) instead of being clipped:
// a sweep with more levels gets a second table for the rest.
const everyMetricColumns = 6

// EveryMetric is every statistic of every metric, for people to read and
// copy: per label, one row per statistic (its unit named), one column per
// level of the key by (concurrency, rate, input tokens …), each cell the
// value with its 95% interval as "316 [312, 320]" (counts as integers).
// Rows with no value at any level are left out, and a metric's note (why
// it is absent or leaves requests out) becomes a footnote. The CSV and
// JSON outputs keep the raw numbers.
func EveryMetric(res *analyze.Result, by string) []*Table {
	groups := res.Groups([]string{by})
	var labels []string
	byLabel := map[string][]*analyze.Group{}
	for _, g := range groups {
		l := fmt.Sprint(g.Keys[analyze.KeyLabel])
		if _, ok := byLabel[l]; !ok {
			labels = append(labels, l)
		}
		byLabel[l] = append(byLabel[l], g)
	}
	var out []*Table
	for _, l := range labels {
		gs := byLabel[l]
		for start := 0; start < len(gs); start += everyMetricColumns {
			part := gs[start:min(start+everyMetricColumns, len(gs))]
			title := "Every metric: " + l
			if len(gs) > everyMetricColumns {
				title += fmt.Sprintf(" (levels %d–%d of %d)", start+1, start+len(part), len(gs))
			}
			out = append(out, everyMetricTable(title, part, by))
		}
	}
	return out
}

func everyMetricTable(title string, gs []*analyze.Group, by string) *Table {
	t := &Table{Title: title, Columns: []string{"metric [unit]"}}
	for _, g := range gs {
		t.Columns = append(t.Columns, levelText(g, []string{by}))
	}
	noted := map[string]bool{}
	for _, m := range analyze.Metrics {
		for _, st := range m.Stats() {
			name := m.Name
			if st != "" {
				name += "_" + st
			}
			row := []string{fmt.Sprintf("%s [%s]", name, m.Unit)}
			any := false
			for _, g := range gs {
				v := g.Values[name]
				cell := formatValue(v, m.IsCount())
				any = any || cell != "—"
				row = append(row, cell)
			}
			if any {
				t.Rows = append(t.Rows, row)
			}
		}
		for _, g := range gs {
			if note := g.Notes[m.Name]; note != "" && !noted[m.Name+"\x00"+note] {
				noted[m.Name+"\x00"+note] = true
				t.Notes = append(t.Notes, fmt.Sprintf("%s (%s): %s", m.Name, levelText(g, []string{by}), note))
			}
		}
	}
	t.Notes = append(t.Notes, "[lo, hi]: the 95% interval of a median or percentile (—: too few samples bound that side); a mean, minimum, maximum or sum has none. docs/METRICS.md defines every metric.")
	return t
}

// formatValue prints a value with its interval, as FormatInterval does;
// counts (requests, tokens) print as integers when whole.
func formatValue(v analyze.Value, count bool) string {
	num := func(x float64) string {
		if count && x == math.Trunc(x) && !math.IsInf(x, 0) {
			return fmt.Sprintf("%d", int64(x))
		}
		return analyze.FormatNum(x, false)
	}
	if !v.Valid() || math.IsInf(v.Value, 0) {
		return "—"
	}
	if !v.HasInterval() {
		return num(v.Value)
	}
	return num(v.Value) + " [" + num(v.Lo) + ", " + num(v.Hi) + "]"
}
