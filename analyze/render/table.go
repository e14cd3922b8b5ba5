package render

import (
	"fmt"
	"math"
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
	res.Want(ms...) // any percentile a column names
	return metricTable(res, o, ms), nil
}

// notes numbers warnings for footnotes, one number per distinct
// (code, keys) so the same problem is not listed twice.
type notes struct {
	index map[string]int
	lines []string
	// brief leaves the evidence out of warning notes (the summary's);
	// the wide tables carry it.
	brief bool
}

func (n *notes) mark(ws []analyze.Warning) string {
	return marks(n.warningIDs(ws))
}

// marks writes footnote numbers as one mark: " [1,3]"; "" for none.
func marks(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return " [" + strings.Join(ids, ",") + "]"
}

func (n *notes) warningIDs(ws []analyze.Warning) []string {
	var ids []string
	for _, w := range ws {
		id := w.Code + fmt.Sprint(sortedKV(w.Keys))
		k, ok := n.index[id]
		if !ok {
			k = len(n.lines) + 1
			n.index[id] = k
			line := fmt.Sprintf("[%d] %s %s: %s", k, w.Code, sortedKV(w.Keys), w.Message)
			if !n.brief {
				line += " (" + EvidenceText(w.Evidence) + ")"
			}
			n.lines = append(n.lines, line)
		}
		ids = append(ids, fmt.Sprint(k))
	}
	return ids
}

// metricNote numbers a group's note on why a metric is absent or leaves
// requests out (prefill_saved's cold line, …) as a footnote.
func (n *notes) metricNote(g *analyze.Group, metric string) []string {
	m, _, err := analyze.LookupMetric(metric)
	if err != nil || g.Notes[m.Name] == "" {
		return nil
	}
	// One footnote per note and group: prefill_saved and cache_speedup
	// share theirs.
	id := "\x00note\x00" + g.Notes[m.Name] + sortedKV(g.Keys)
	k, ok := n.index[id]
	if !ok {
		k = len(n.lines) + 1
		n.index[id] = k
		n.lines = append(n.lines, fmt.Sprintf("[%d] %s %s: %s", k, m.Name, sortedKV(g.Keys), g.Notes[m.Name]))
	}
	return []string{fmt.Sprint(k)}
}

// cellMarks is the one mark of a cell: its failure's footnote, then its
// warnings'.
func (n *notes) cellMarks(f analyze.Failures, ws []analyze.Warning) string {
	return marks(append(n.failIDs(f), n.warningIDs(ws)...))
}

// failMark numbers the server's own explanation of a failure class as a
// footnote, once per distinct (class, message), so a cell can point at it
// ("4 of 8 failed: http-status [2]") without repeating a long message in
// every row.
func (n *notes) failIDs(f analyze.Failures) []string {
	if f.Message == "" {
		return nil
	}
	id := "\x00failed\x00" + f.Class + "\x00" + f.Message
	k, ok := n.index[id]
	if !ok {
		k = len(n.lines) + 1
		n.index[id] = k
		n.lines = append(n.lines, fmt.Sprintf("[%d] failed requests (%s): %s", k, f.Class, f.Message))
	}
	return []string{fmt.Sprint(k)}
}

// failText says in a cell that not every request succeeded: "4 of 8
// failed: http-status", "all 8 failed: http-status", "mostly" when there
// are several classes; "" when none failed.
func failText(f analyze.Failures) string {
	if f.Failed == 0 {
		return ""
	}
	class := f.Class
	if f.Classes > 1 {
		class = "mostly " + class
	}
	if f.All() {
		return fmt.Sprintf("all %d failed: %s", f.Requests, class)
	}
	return fmt.Sprintf("%d of %d failed: %s", f.Failed, f.Requests, class)
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

// EvidenceText writes a warning's evidence for people: plain words and
// numbers (errors_clustered's per-value breakdown as sentences, counts as
// integers, lists with commas), never Go's map syntax. JSON keeps the
// structure; tables, stderr lines and the HTML report use this.
func EvidenceText(ev map[string]any) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	_, perValue := ev["by_value"].([]map[string]any)
	var parts []string
	for _, k := range keys {
		if perValue && (k == "key" || k == "failing" || k == "clean") {
			continue // the per-value breakdown and the message say these
		}
		if rows, ok := ev[k].([]map[string]any); ok {
			// A per-value breakdown (errors_clustered's by_value) in plain
			// words, not Go's map syntax; JSON keeps the structure.
			parts = append(parts, byValueText(ev["key"], rows))
			continue
		}
		parts = append(parts, k+"="+evidenceValue(ev[k]))
	}
	return strings.Join(parts, " ")
}

// evidenceValue writes one evidence value for people: counts as integers
// (merged counts are float64: 5, not 5.000 or 1e+06), lists joined by
// commas, a count per name as "length 5, stop 2" — never Go's [a b] or
// map[k:v] syntax.
func evidenceValue(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprint(int64(x))
		}
		return fmt.Sprint(x)
	case []int:
		s := make([]string, len(x))
		for i, n := range x {
			s[i] = fmt.Sprint(n)
		}
		return strings.Join(s, ",")
	case []float64:
		s := make([]string, len(x))
		for i, n := range x {
			s[i] = evidenceValue(n)
		}
		return strings.Join(s, ",")
	case []string:
		return strings.Join(x, ",")
	case map[string]int:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		for i, k := range names {
			if k == "" {
				names[i] = fmt.Sprintf("(none) %d", x[k])
			} else {
				names[i] = fmt.Sprintf("%s %d", k, x[k])
			}
		}
		return strings.Join(names, ", ")
	}
	return fmt.Sprint(v)
}

// byValueText renders rows {key: v, requests, failed, classes[, message]}
// as "input tokens 5,000: 6 of 6 failed, HTTP 400 Bad Request: request
// (5000 tokens) exceeds the available context size; …", or with the
// classes counted ("(http-status 4, reset 2)") when no class dominates.
func byValueText(key any, rows []map[string]any) string {
	k, _ := key.(string)
	var out []string
	for _, r := range rows {
		v := fmt.Sprint(r[k])
		if n, ok := r[k].(int); ok {
			v = analyze.GroupDigits(int64(n))
		}
		line := fmt.Sprintf("%s %s: %v of %v failed", strings.ReplaceAll(k, "_", " "), v, r["failed"], r["requests"])
		if msg, ok := r["message"].(string); ok && msg != "" {
			// One class is most of the failures: the server's own
			// words say more than the class name.
			line += ", " + msg
		} else if cl, ok := r["classes"].(map[string]int); ok && len(cl) > 0 {
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

// seedTable is the concurrency-sweep comparison: one row per concurrency
// (and input length when there are several), one column per label holding
// "per-stream / aggregate tok/s", and the label's TTFT p50. A cell whose
// requests did not all succeed says how many failed and why; a cell where
// all failed says only that. For CSV (o.Raw) the same numbers come tidy:
// one row per label and row key, one value per column.
func seedTable(res *analyze.Result, o TableOptions) *Table {
	groups := res.Groups([]string{analyze.KeyConcurrency, analyze.KeyInputTokens})
	var labels []string
	seenL := map[string]bool{}
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
	if o.Raw {
		return seedTableTidy(res, labels, rows, cell)
	}
	t := &Table{Title: fmt.Sprintf("per-stream / aggregate output tok/s (definitions: %s)", res.Definitions.Name)}
	t.Columns = []string{"concurrency"}
	multiIn := len(inputs) > 1
	if multiIn {
		t.Columns = append(t.Columns, "input tokens")
	}
	// The server's own account, beside TTFT, for labels whose traces
	// scraped its /metrics.
	state, mem := map[string]bool{}, map[string]bool{}
	for _, g := range groups {
		if g.Values["server_running_peak"].Valid() || g.Values["server_kv_usage_peak"].Valid() {
			state[g.Keys[analyze.KeyLabel].(string)] = true
		}
		if g.Values["process_rss_peak"].Valid() {
			mem[g.Keys[analyze.KeyLabel].(string)] = true
		}
	}
	for _, l := range labels {
		t.Columns = append(t.Columns, l, l+" TTFT p50 ms")
		if state[l] {
			t.Columns = append(t.Columns, l+" server running/waiting, KV")
		}
		if mem[l] {
			t.Columns = append(t.Columns, l+" peak memory MB")
		}
	}
	extra := func(row []string, l string, g *analyze.Group) []string {
		if state[l] {
			cell := "—"
			if g != nil {
				cell = serverStateText(g)
			}
			row = append(row, cell)
		}
		if mem[l] {
			cell := "—"
			if g != nil {
				if v := g.Values["process_rss_peak_max"]; v.Valid() {
					cell = fmt.Sprintf("%.0f", v.Value)
				}
			}
			row = append(row, cell)
		}
		return row
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
				row = extra(append(row, "—", "—"), l, nil)
				continue
			}
			f := g.Failures()
			if f.All() {
				// No speed to show: say so, not "— / —".
				row = extra(append(row, failText(f)+n.cellMarks(f, g.Warnings), "—"), l, g)
				continue
			}
			ps, agg := g.Values["per_stream_tps"], g.Values["aggregate_tps"]
			text := analyze.FormatTPS(ps, false) + " / " + analyze.FormatTPS(agg, false)
			if ft := failText(f); ft != "" {
				text += " (" + ft + ")"
			}
			row = extra(append(row, text+n.cellMarks(f, g.Warnings), analyze.FormatMs(g.Values["ttft_p50"].Value, false)), l, g)
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
	if len(mem) > 0 {
		t.Notes = append(t.Notes, "peak memory: the most resident memory the watched server process and its children held during the cell's runs (--watch-pid; process_rss_peak_max, MB)")
	}
	if len(state) > 0 {
		t.Notes = append(t.Notes, "server running/waiting, KV: the most requests the server said it was running and queueing at once, and its fullest KV cache, in the scrapes of its /metrics taken during the cell's runs (docs/METRICS.md, \"Server state\")")
	}
	t.Notes = append(t.Notes, "per-stream: median over requests; aggregate: median over runs (formulas: docs/METRICS.md, definition set "+res.Definitions.Name+"); ±: half-width of the 95% interval of the median, shown from 6 samples on")
	if compare {
		t.Notes = append(t.Notes, fmt.Sprintf("Δ: %s relative to %s; ~ means no significant difference (Mann-Whitney U, p > %.2f)", labels[1], labels[0], analyze.Alpha))
	}
	t.Notes = append(t.Notes, scalingNotes(res)...)
	return t
}

type rowKey struct{ c, in int }

// serverStateText is the server's own account of a cell: the most requests
// it ran and queued at once, and its fullest KV cache, over the cell's
// runs (server_running_peak_max, server_waiting_peak_max,
// server_kv_usage_peak_max); "—" where no scrape fell in the cell's runs.
func serverStateText(g *analyze.Group) string {
	num := func(name string) string {
		if v := g.Values[name]; v.Valid() {
			return fmt.Sprintf("%.0f", v.Value)
		}
		return "—"
	}
	text := num("server_running_peak_max") + "/" + num("server_waiting_peak_max")
	if kv := g.Values["server_kv_usage_peak_max"]; kv.Valid() {
		if pct := kv.Value * 100; pct < 9.95 {
			text += fmt.Sprintf(", %.1f%%", pct)
		} else {
			text += fmt.Sprintf(", %.0f%%", pct)
		}
	}
	if text == "—/—" {
		return "—"
	}
	return text
}

// SweepColumns are the columns of the concurrency sweep as CSV: one value
// each, so pandas, DuckDB or a spreadsheet read numbers, not "a / b"
// strings. _lo and _hi bound the median's 95% interval (empty when too few
// samples bound that side); the delta columns compare a label with the
// first label (empty on the first label's rows and with one label).
var SweepColumns = []string{analyze.KeyLabel, analyze.KeyConcurrency, analyze.KeyInputTokens,
	"per_stream_tps", "per_stream_tps_lo", "per_stream_tps_hi",
	"aggregate_tps", "aggregate_tps_lo", "aggregate_tps_hi",
	"ttft_p50_ms", "requests_ok", "requests_failed", "error_class",
	"per_stream_tps_delta_pct", "per_stream_tps_delta_p", "aggregate_tps_delta_pct", "aggregate_tps_delta_p"}

func seedTableTidy(res *analyze.Result, labels []string, rows []rowKey, cell map[string]map[rowKey]*analyze.Group) *Table {
	t := &Table{Title: fmt.Sprintf("concurrency sweep (definitions: %s)", res.Definitions.Name), Columns: SweepColumns}
	num := func(x float64) string { return analyze.FormatNum(x, true) }
	interval := func(v analyze.Value) []string {
		lo, hi := "", ""
		if v.HasInterval() {
			lo, hi = num(v.Lo), num(v.Hi)
		}
		return []string{num(v.Value), lo, hi}
	}
	for li, l := range labels {
		for _, rk := range rows {
			g := cell[l][rk]
			if g == nil {
				continue
			}
			f := g.Failures()
			row := []string{l, fmt.Sprint(rk.c), fmt.Sprint(rk.in)}
			row = append(row, interval(g.Values["per_stream_tps"])...)
			row = append(row, interval(g.Values["aggregate_tps"])...)
			row = append(row, num(g.Values["ttft_p50"].Value), fmt.Sprint(f.Requests-f.Failed), fmt.Sprint(f.Failed), f.Class)
			for _, m := range []string{"per_stream_tps", "aggregate_tps"} {
				pct, p := "", ""
				if li > 0 {
					if d, ok := deltaOf(cell[labels[0]][rk], g, m); ok {
						pct, p = num(d.pct), num(d.p)
					}
				}
				row = append(row, pct, p)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// change is the comparison of one metric between two groups: the change
// of the median in percent and the Mann-Whitney p-value of the samples.
type change struct {
	pct, p float64
	na, nb int
}

func deltaOf(a, b *analyze.Group, metric string) (change, bool) {
	if a == nil || b == nil {
		return change{}, false
	}
	va, vb := a.Values[metric], b.Values[metric]
	if !va.Valid() || !vb.Valid() || va.Value == 0 {
		return change{}, false
	}
	sa, sb := a.Samples(metric), b.Samples(metric)
	return change{pct: (vb.Value/va.Value - 1) * 100, p: analyze.MannWhitneyP(sa, sb), na: len(sa), nb: len(sb)}, sa != nil && sb != nil
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
	d, ok := deltaOf(a, b, metric)
	if !ok || d.p > analyze.Alpha {
		sa, sb := a.Samples(metric), b.Samples(metric)
		return fmt.Sprintf("~ (p=%.2f n=%d+%d)", analyze.MannWhitneyP(sa, sb), len(sa), len(sb))
	}
	ps := fmt.Sprintf("p=%.3f", d.p)
	if d.p < 0.001 {
		ps = "p<0.001"
	}
	return fmt.Sprintf("%+.1f%% (%s n=%d+%d)", d.pct, ps, d.na, d.nb)
}

// DefaultBy is the grouping of the metric table when TableOptions.By is
// empty (and the CLI's --by default).
func DefaultBy() []string { return []string{analyze.KeyConcurrency} }

// metricTable is one row per group and one column per metric. Counts
// print as integers. When some group's requests did not all succeed, a
// "failed" column says how many and why (CSV: requests_failed and
// error_class columns, always there so the columns do not depend on the
// data).
func metricTable(res *analyze.Result, o TableOptions, metrics []string) *Table {
	by := o.By
	if len(by) == 0 {
		by = DefaultBy()
	}
	groups := res.Groups(by)
	keys := append([]string{analyze.KeyLabel}, analyze.WithoutLabel(by)...)
	t := &Table{Title: fmt.Sprintf("metrics by %s (definitions: %s; times in ms)", strings.Join(keys, ", "), res.Definitions.Name)}
	t.Columns = append(t.Columns, keys...)
	hasFailed := false
	for _, m := range metrics {
		t.Columns = append(t.Columns, m)
		if o.Raw {
			t.Columns = append(t.Columns, m+"_lo", m+"_hi")
		}
		hasFailed = hasFailed || m == "requests_failed"
	}
	anyFailed := false
	for _, g := range groups {
		anyFailed = anyFailed || g.Failures().Failed > 0
	}
	if o.Raw {
		if !hasFailed {
			t.Columns = append(t.Columns, "requests_failed")
		}
		t.Columns = append(t.Columns, "error_class")
	} else {
		if anyFailed {
			t.Columns = append(t.Columns, "failed")
		}
		t.Columns = append(t.Columns, "warnings")
	}
	n := &notes{index: map[string]int{}}
	for _, g := range groups {
		var row []string
		for _, k := range keys {
			row = append(row, fmt.Sprint(g.Keys[k]))
		}
		f := g.Failures()
		for _, m := range metrics {
			v := g.Values[m]
			if o.Raw {
				lo, hi := "", ""
				if v.HasInterval() {
					lo, hi = analyze.FormatMetric(m, analyze.Value{Value: v.Lo}, true), analyze.FormatMetric(m, analyze.Value{Value: v.Hi}, true)
				}
				row = append(row, analyze.FormatMetric(m, v, true), lo, hi)
				continue
			}
			row = append(row, analyze.FormatMetric(m, v, false)+marks(n.metricNote(g, m)))
		}
		if o.Raw {
			if !hasFailed {
				row = append(row, fmt.Sprint(f.Failed))
			}
			row = append(row, f.Class)
		} else {
			if anyFailed {
				row = append(row, strings.TrimSpace(failText(f)+marks(n.failIDs(f))))
			}
			row = append(row, strings.TrimSpace(n.mark(g.Warnings)))
		}
		t.Rows = append(t.Rows, row)
	}
	for _, w := range res.Warnings {
		n.mark([]analyze.Warning{w})
	}
	t.Notes = append(n.lines, scalingNotes(res)...)
	return t
}
