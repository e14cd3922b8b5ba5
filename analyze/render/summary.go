package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
)

// The summary is what a person reads first after a run or an analysis:
// per label and load level, the latencies at the percentiles every serving
// benchmark prints (p50, p90, p95, p99), the per-stream and aggregate
// throughput with their 95% intervals, what failed, and the warnings that
// change how the numbers read. It fits 100 columns; the wide tables (one
// column per label, every footnote's evidence) stay a flag away.

// SummaryWidth is the widest line the text summary prints.
const SummaryWidth = 100

// SummaryPercentiles are the summary's latency columns.
var SummaryPercentiles = []struct {
	Name string
	Q    float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}}

// summaryLatencies are the summary's latency rows: the metric and the name
// people know it by.
var summaryLatencies = []struct{ metric, name string }{
	{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E"},
}

// SummaryOptions choose the summary's groups.
type SummaryOptions struct {
	// By are the level keys beside the label. Default: the concurrency,
	// or the request rate when the traces hold open-loop phases (both
	// when they hold both), as analyze's --by default. Input length is
	// added when the traces hold several and By does not name it, as the
	// sweep table does.
	By []string
}

// Summary is the compact answer, ready for a renderer: every cell is
// already formatted, so the text and the HTML report print the same.
type Summary struct {
	// Definitions names the definition set the figures follow.
	Definitions string
	// Percentiles head the latency columns.
	Percentiles []string
	Blocks      []SummaryBlock
	// Notes are the numbered warnings and failure explanations the
	// blocks point at, then the prefill scaling notes.
	Notes []string
	// Legend says what the figures are, in one sentence.
	Legend string
}

// SummaryBlock is one label at one load level.
type SummaryBlock struct {
	Label string
	// Level names the load level ("concurrency 4", "2 requests/s"),
	// "" when the groups have no level key.
	Level string
	// Requests says how many requests there were and how many failed,
	// with the mark of the failure's note ("24 requests ok",
	// "3 of 24 failed: http-status [2]").
	Requests string
	Runs     int
	// AllFailed: nothing succeeded, so there is no figure to show.
	AllFailed bool
	// PerStream and Aggregate are output tok/s medians with their 95%
	// intervals ("316 [312, 320]").
	PerStream, Aggregate string
	Latencies            []SummaryRow
	// Server is the server's own account from its /metrics, Memory the
	// watched process's peak: "" when the trace has none.
	Server, Memory string
	// Warnings are the marks of this block's warnings: "[1] client_behind".
	Warnings []string
	// Versus compares the block with the first label's at the same level:
	// "vs A: per stream +12.0% (p=0.002), aggregate no significant change
	// (p=0.31)".
	Versus string
}

// SummaryRow is one latency metric at each percentile, in ms.
type SummaryRow struct {
	Name  string
	Cells []string
}

// BuildSummary makes the summary of res.
func BuildSummary(res *analyze.Result, o SummaryOptions) *Summary {
	by := o.By
	if len(by) == 0 {
		by = DefaultLevels(res)
	}
	by = analyze.WithoutLabel(by)
	// Grouping by input length too changes nothing when the traces hold
	// one; when they hold several, the level names it.
	keys := by
	if !slices.Contains(by, analyze.KeyInputTokens) {
		keys = append(slices.Clone(by), analyze.KeyInputTokens)
	}
	all := res.Groups(keys)
	inputs := map[any]bool{}
	for _, g := range all {
		inputs[g.Keys[analyze.KeyInputTokens]] = true
	}
	if len(inputs) > 1 {
		by = keys
	}
	groups := levelMajor(all, by)
	s := &Summary{Definitions: res.Definitions.Name}
	for _, p := range SummaryPercentiles {
		s.Percentiles = append(s.Percentiles, p.Name)
	}
	n := &notes{index: map[string]int{}, brief: true}
	first := map[string]*analyze.Group{} // level → the first label's group
	firstLabel := ""
	if len(groups) > 0 {
		firstLabel = fmt.Sprint(groups[0].Keys[analyze.KeyLabel])
	}
	for _, g := range groups {
		if l := fmt.Sprint(g.Keys[analyze.KeyLabel]); l == firstLabel || firstLabel == "" {
			first[levelText(g, by)] = g
		}
	}
	for _, g := range groups {
		label := fmt.Sprint(g.Keys[analyze.KeyLabel])
		level := levelText(g, by)
		f := g.Failures()
		b := SummaryBlock{Label: label, Level: level, Runs: g.Runs, AllFailed: f.All() || f.Requests == 0}
		switch {
		case f.Requests == 0:
			b.Requests = "no measured request"
		case f.Failed == 0:
			b.Requests = plural(f.Requests, "request", "requests") + " ok"
		default:
			b.Requests = failText(f) + marks(n.failIDs(f))
		}
		if !b.AllFailed {
			b.PerStream = FormatInterval(g.Values["per_stream_tps"])
			b.Aggregate = FormatInterval(g.Values["aggregate_tps"])
			for _, m := range summaryLatencies {
				row := SummaryRow{Name: m.name}
				for _, p := range SummaryPercentiles {
					row.Cells = append(row.Cells, analyze.FormatMs(percentile(g, m.metric, p.Name, p.Q).Value, false))
				}
				b.Latencies = append(b.Latencies, row)
			}
		}
		b.Server, b.Memory = serverWords(g), memoryWords(g)
		for i, id := range n.warningIDs(g.Warnings) {
			b.Warnings = append(b.Warnings, "["+id+"] "+g.Warnings[i].Code)
		}
		if a := first[level]; a != nil && a != g && label != firstLabel {
			b.Versus = fmt.Sprintf("vs %s: per stream %s, aggregate %s", firstLabel, changeWords(a, g, "per_stream_tps"), changeWords(a, g, "aggregate_tps"))
		}
		s.Blocks = append(s.Blocks, b)
	}
	for _, w := range res.Warnings {
		n.mark([]analyze.Warning{w})
	}
	s.Notes = append(n.lines, scalingNotes(res)...)
	vs := ""
	for _, b := range s.Blocks {
		if b.Versus != "" {
			vs = fmt.Sprintf(" vs: the change of the median, significant by a Mann-Whitney U test at the %.0f%% level.", analyze.Alpha*100)
			break
		}
	}
	s.Legend = fmt.Sprintf("ms: latency percentiles of successful requests (TPOT per request, ITL per gap between tokens). "+
		"tok/s: output tokens per second, per stream the median over requests, aggregate the median over runs, "+
		"[lo, hi] its 95%% interval (—: too few samples).%s Definitions: docs/METRICS.md (set %s). "+
		"The wide tables, with each warning's evidence: llmreplay analyze --wide; every value: --format json.", vs, res.Definitions.Name)
	return s
}

// DefaultLevels is the grouping when none is asked for: rate phases have
// no concurrency, so a rate sweep is shown by rate (and traces mixing both
// by concurrency and rate) rather than pooled into "concurrency 0".
func DefaultLevels(res *analyze.Result) []string {
	switch some, all := res.RatePhases(); {
	case all:
		return []string{analyze.KeyRate}
	case some:
		return []string{analyze.KeyConcurrency, analyze.KeyRate}
	}
	return DefaultBy()
}

// percentile is a latency metric's percentile: the value the analysis
// keeps under its name (ttft_p90) when it has one, else computed from the
// same distribution (analyze.Group.Quantile), so p95 needs no name of its
// own in the registry.
func percentile(g *analyze.Group, metric, name string, q float64) analyze.Value {
	if v, ok := g.Values[metric+"_"+name]; ok {
		return v
	}
	if v, ok := g.Quantile(metric, q); ok {
		return v
	}
	return analyze.Value{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
}

// changeWords says in words how a metric's median moved from a to b: "+12.0%
// (p=0.002)" when the samples differ significantly (Mann-Whitney U, as the
// wide table's Δ), "no significant change (p=0.31)" when they do not, "—"
// when either side has no value. The sample counts are the blocks' own.
func changeWords(a, b *analyze.Group, metric string) string {
	d, ok := deltaOf(a, b, metric)
	switch {
	case !ok:
		return "—"
	case d.p > analyze.Alpha:
		return fmt.Sprintf("no significant change (p=%.2f)", d.p)
	case d.p < 0.001:
		return fmt.Sprintf("%+.1f%% (p<0.001)", d.pct)
	}
	return fmt.Sprintf("%+.1f%% (p=%.3f)", d.pct, d.p)
}

// levelMajor orders the groups by level, then label in input order, so a
// comparison's blocks for one level sit together.
func levelMajor(groups []*analyze.Group, by []string) []*analyze.Group {
	labelOrder := map[string]int{}
	phaseOrder := map[string]int{}
	for _, g := range groups {
		l := fmt.Sprint(g.Keys[analyze.KeyLabel])
		if _, ok := labelOrder[l]; !ok {
			labelOrder[l] = len(labelOrder)
		}
		if p, ok := g.Keys[analyze.KeyPhase].(string); ok {
			if _, seen := phaseOrder[p]; !seen {
				phaseOrder[p] = len(phaseOrder)
			}
		}
	}
	out := append([]*analyze.Group(nil), groups...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		for _, k := range by {
			if c := compareKey(k, a.Keys[k], b.Keys[k], phaseOrder); c != 0 {
				return c < 0
			}
		}
		return labelOrder[fmt.Sprint(a.Keys[analyze.KeyLabel])] < labelOrder[fmt.Sprint(b.Keys[analyze.KeyLabel])]
	})
	return out
}

// compareKey orders two values of one grouping key: numbers by value,
// phases in the order they ran, anything else as text.
func compareKey(k string, a, b any, phaseOrder map[string]int) int {
	if k == analyze.KeyPhase {
		return phaseOrder[fmt.Sprint(a)] - phaseOrder[fmt.Sprint(b)]
	}
	x, xok := KeyNumber(a)
	y, yok := KeyNumber(b)
	switch {
	case xok && yok && x < y:
		return -1
	case xok && yok && x > y:
		return 1
	case xok && yok:
		return 0
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// KeyNumber reads a grouping key's value (concurrency, rate, input
// tokens …) as a number; false for a text key (label, phase).
func KeyNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// levelText names a group's level in words: "concurrency 4",
// "2 requests/s", "input 800 tokens", "turn 2" …; "" without level keys.
func levelText(g *analyze.Group, by []string) string {
	var parts []string
	for _, k := range by {
		v, ok := g.Keys[k]
		if !ok {
			continue
		}
		switch k {
		case analyze.KeyRate:
			if r, _ := KeyNumber(v); r == 0 {
				parts = append(parts, "no rate (closed loop)")
			} else {
				parts = append(parts, fmt.Sprintf("%g requests/s", r))
			}
		case analyze.KeyInputTokens:
			parts = append(parts, fmt.Sprintf("input %v tokens", v))
		default:
			parts = append(parts, fmt.Sprintf("%s %v", strings.ReplaceAll(k, "_", " "), v))
		}
	}
	return strings.Join(parts, ", ")
}

// FormatInterval prints a median with its 95% interval as "316 [312, 320]",
// a side too few samples bound as "—" ("303 [296, —]", "5.50 [—, —]"), and
// a statistic that has no interval (a mean, a sum) alone; "—" when there is
// no value.
func FormatInterval(v analyze.Value) string { return formatValue(v, false) }

// serverWords is the server's own account of a group in words: the most
// requests it said it ran and queued at once and its fullest KV cache,
// from the scrapes of its /metrics during the group's runs.
func serverWords(g *analyze.Group) string {
	var parts []string
	if v := g.Values["server_running_peak_max"]; v.Valid() {
		parts = append(parts, fmt.Sprintf("at most %.0f running", v.Value))
	}
	if v := g.Values["server_waiting_peak_max"]; v.Valid() {
		parts = append(parts, fmt.Sprintf("%.0f waiting", v.Value))
	}
	if v := g.Values["server_kv_usage_peak_max"]; v.Valid() {
		parts = append(parts, fmt.Sprintf("KV cache %s%% full", analyze.FormatNum(v.Value*100, false)))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " (its /metrics)"
}

// memoryWords is the watched server process's peak resident memory.
func memoryWords(g *analyze.Group) string {
	if v := g.Values["process_rss_peak_max"]; v.Valid() {
		return fmt.Sprintf("peak %.0f MB resident (--watch-pid, with its children)", v.Value)
	}
	return ""
}

// RenderSummaryText prints s for a terminal: one block per label and
// level, then the notes, every line within SummaryWidth columns (a long
// label or note wraps, its continuation indented).
func RenderSummaryText(w io.Writer, s *Summary) error {
	var b strings.Builder
	line := func(indent, text string) {
		for _, l := range Wrap(safetext.Show(text), SummaryWidth-utf8.RuneCountInString(indent), "    ") {
			b.WriteString(strings.TrimRight(indent+l, " ") + "\n")
		}
	}
	// One width for every latency column of every block, so blocks read
	// as one table down the page.
	colW := 7
	for _, p := range s.Percentiles {
		colW = max(colW, utf8.RuneCountInString(p))
	}
	for _, bl := range s.Blocks {
		for _, r := range bl.Latencies {
			for _, c := range r.Cells {
				colW = max(colW, utf8.RuneCountInString(c))
			}
		}
	}
	fmt.Fprintf(&b, "summary (definitions: %s)\n", s.Definitions)
	for _, bl := range s.Blocks {
		b.WriteString("\n")
		head := []string{bl.Label}
		if bl.Level != "" {
			head = append(head, bl.Level)
		}
		head = append(head, bl.Requests, plural(bl.Runs, "run", "runs"))
		line("", strings.Join(head, " · "))
		if !bl.AllFailed {
			line("  ", fmt.Sprintf("tok/s  per stream %s   aggregate %s", bl.PerStream, bl.Aggregate))
			row := func(name string, cells []string) {
				t := fmt.Sprintf("  %-6s", name)
				for _, c := range cells {
					t += "  " + strings.Repeat(" ", colW-utf8.RuneCountInString(c)) + c
				}
				b.WriteString(strings.TrimRight(t, " ") + "\n")
			}
			row("ms", s.Percentiles)
			for _, r := range bl.Latencies {
				row(r.Name, r.Cells)
			}
		}
		if bl.Server != "" {
			line("  ", "server "+bl.Server)
		}
		if bl.Memory != "" {
			line("  ", "memory "+bl.Memory)
		}
		if len(bl.Warnings) > 0 {
			line("  ", "warnings "+strings.Join(bl.Warnings, ", "))
		}
		if bl.Versus != "" {
			line("  ", bl.Versus)
		}
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range s.Notes {
			line("", n)
		}
	}
	b.WriteString("\n")
	line("", s.Legend)
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Wrap breaks text into lines of at most width runes at single spaces,
// continuation lines starting with indent; a word longer than a line
// stays whole. Joining the lines with the indent replaced by one space
// gives the text back.
func Wrap(text string, width int, indent string) []string {
	words := strings.Split(text, " ")
	var lines []string
	cur, curW := "", 0
	for i, w := range words {
		ww := utf8.RuneCountInString(w)
		switch {
		case i == 0:
			cur, curW = w, ww
		case curW+1+ww <= width:
			cur += " " + w
			curW += 1 + ww
		default:
			lines = append(lines, cur)
			cur, curW = indent+w, utf8.RuneCountInString(indent)+ww
		}
	}
	return append(lines, cur)
}
