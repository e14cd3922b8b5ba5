package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// Timelines collect, while the traces are read once for the analysis, one
// run per label and load level (the first repeat of each concurrency, rate
// or input length): one row per request from its scheduled send to its end,
// with the arrival of every chunk, as vLLM's timeline plot shows, plus the
// schedule. What a table's medians hide shows here: a burst whose requests
// start their answers one after another (slots), a stall, a request that
// waited for a connection. Bounded: at most maxTimelines runs, maxRows
// requests a run and maxTicks chunk marks a request are kept.
type Timelines struct {
	pick  map[string]map[int]string // label → phase index → the level it draws ("" : not drawn)
	runs  map[string]*Timeline      // label + level → its run
	order []string
}

const (
	maxTimelines = 12
	maxRows      = 32
	maxTicks     = 150 // a page stays well under 2 MB: 12 × 32 × 150 marks of ~10 bytes
)

// Timeline is one run, drawn as one chart.
type Timeline struct {
	Label, Level string
	Rows         []TimelineRow
	// More counts the run's requests not drawn (past maxRows).
	More int
}

// TimelineRow is one request; times are run-clock nanoseconds (0: did not
// happen).
type TimelineRow struct {
	ID                                 string
	Scheduled, Sent, First, Last, Done int64
	Ticks                              []int64
	Error                              string // the error class; "" when it succeeded
}

// Add takes one record (Options.Records of the analysis). Warm-ups and
// records of other repeats are not kept.
func (ts *Timelines) Add(label string, h *trace.Header, rec *trace.Record) {
	if ts.pick == nil {
		ts.pick, ts.runs = map[string]map[int]string{}, map[string]*Timeline{}
	}
	pk, ok := ts.pick[label]
	if !ok {
		pk = levels(h)
		ts.pick[label] = pk
	}
	level := pk[rec.Phase]
	if rec.Warmup || level == "" {
		return
	}
	key := label + "\x00" + level
	t := ts.runs[key]
	if t == nil {
		if len(ts.order) >= maxTimelines {
			return
		}
		t = &Timeline{Label: label, Level: level}
		ts.runs[key] = t
		ts.order = append(ts.order, key)
	}
	if len(t.Rows) >= maxRows {
		t.More++
		return
	}
	row := TimelineRow{ID: rec.ID, Scheduled: rec.Scheduled, Sent: rec.Sent, Done: rec.Done}
	if rec.Error != nil {
		row.Error = string(rec.Error.Class)
	}
	var content []int64
	for _, c := range rec.Chunks {
		if c.Text != "" || c.Reasoning != "" {
			content = append(content, c.T)
		}
	}
	if len(content) > 0 {
		row.First, row.Last = content[0], content[len(content)-1]
	}
	step := max(1, (len(content)+maxTicks-1)/maxTicks)
	for i := 0; i < len(content); i += step {
		row.Ticks = append(row.Ticks, content[i])
	}
	t.Rows = append(t.Rows, row)
}

// levels maps each phase of h to the level it draws: the first phase (by
// index) of each concurrency, rate and input length, "" for the others.
func levels(h *trace.Header) map[int]string {
	phases := append([]trace.Phase(nil), h.Phases...)
	sort.Slice(phases, func(i, j int) bool { return phases[i].Index < phases[j].Index })
	inputs := map[int]bool{}
	for _, p := range phases {
		inputs[p.InputTokens] = true
	}
	seen := map[string]bool{}
	out := map[int]string{}
	for _, p := range phases {
		if p.Kind == "warmup" {
			continue
		}
		l := fmt.Sprintf("concurrency %d", p.Concurrency)
		if p.Rate > 0 {
			l = fmt.Sprintf("%g requests/s", p.Rate)
		}
		if len(inputs) > 1 {
			l += fmt.Sprintf(", %d input tokens", p.InputTokens)
		}
		if !seen[l] {
			seen[l] = true
			out[p.Index] = l
		}
	}
	return out
}

// list returns the runs in the order they were first seen, rows by
// scheduled time.
func (ts *Timelines) list() []*Timeline {
	if ts == nil {
		return nil
	}
	out := make([]*Timeline, 0, len(ts.order))
	for _, k := range ts.order {
		t := ts.runs[k]
		sort.SliceStable(t.Rows, func(i, j int) bool {
			if t.Rows[i].Scheduled != t.Rows[j].Scheduled {
				return t.Rows[i].Scheduled < t.Rows[j].Scheduled
			}
			return t.Rows[i].Sent < t.Rows[j].Sent
		})
		out = append(out, t)
	}
	return out
}

// Timeline geometry.
const (
	tlW, tlRow, tlTop, tlBottom, tlLeft, tlRight = 900, 12, 8, 36, 90, 110
)

// drawTimeline writes one run as inline SVG: per request a dashed line from
// its scheduled time to its send (lateness), a thin line to its first token
// (waiting: queue and prefill), a bar to its last token (the answer) with a
// mark per chunk, and for a failed request a red line to its end with the
// error class.
func drawTimeline(t *Timeline) template.HTML {
	var b strings.Builder
	ticks := 0
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range t.Rows {
		ticks += len(r.Ticks)
		for _, v := range []int64{r.Scheduled, r.Sent, r.First, r.Last, r.Done} {
			if v > 0 || (v == 0 && r.Scheduled == 0 && v == r.Scheduled) {
				t0, t1 = min(t0, v), max(t1, v)
			}
		}
	}
	title := fmt.Sprintf("Timeline: %s, %s (first repeat)", t.Label, t.Level)
	fmt.Fprintf(&b, `<figure class="timeline" data-rows="%d" data-ticks="%d" data-failed="%d"><figcaption>%s</figcaption>`,
		len(t.Rows), ticks, failedRows(t), esc(title))
	if len(t.Rows) == 0 || t1 <= t0 {
		b.WriteString(`<p class="empty">No request of this run to draw.</p></figure>`)
		return template.HTML(b.String())
	}
	h := tlTop + len(t.Rows)*tlRow + tlBottom
	pw := float64(tlW - tlLeft - tlRight)
	// Milliseconds from the first scheduled send, on whole 1-2-5 steps.
	xa := linearAxis(0, float64(t1-t0)/1e6, 8)
	sx := func(v int64) float64 { return tlLeft + xa.pos(float64(v-t0)/1e6)*pw }
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, tlW, h, esc(title))
	fmt.Fprintf(&b, `<rect class="frame" x="%d" y="%d" width="%.0f" height="%d"/>`, tlLeft, tlTop, pw, len(t.Rows)*tlRow)
	for _, ms := range xa.ticks {
		x := tlLeft + xa.pos(ms)*pw
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			x, x, tlTop, tlTop+len(t.Rows)*tlRow, x, tlTop+len(t.Rows)*tlRow+14, esc(short(ms)))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">ms from the run's first scheduled send</text>`, tlLeft+pw/2, h-6)
	for i, r := range t.Rows {
		y := float64(tlTop + i*tlRow + tlRow/2)
		fmt.Fprintf(&b, `<g class="req%s" data-ticks="%d"><title>%s</title>`, map[bool]string{true: " failed", false: ""}[r.Error != ""], len(r.Ticks), esc(rowTitle(r)))
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, tlLeft-4, y+3.5, esc(clipID(r.ID)))
		if r.Sent > r.Scheduled {
			fmt.Fprintf(&b, `<line class="late" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(r.Scheduled), sx(r.Sent), y, y)
		}
		switch {
		case r.Error != "":
			end := r.Done
			if end < r.Sent {
				end = r.Sent
			}
			fmt.Fprintf(&b, `<line class="fail" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(r.Sent), sx(end), y, y)
			fmt.Fprintf(&b, `<text class="failtext" x="%.1f" y="%.1f">%s</text>`, sx(end)+4, y+3.5, esc(r.Error))
		case r.First > 0:
			fmt.Fprintf(&b, `<line class="wait" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(r.Sent), sx(r.First), y, y)
			fmt.Fprintf(&b, `<rect class="answer" x="%.1f" y="%.1f" width="%.1f" height="6"/>`, sx(r.First), y-3, math.Max(sx(r.Last)-sx(r.First), 1))
		default:
			fmt.Fprintf(&b, `<line class="wait" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(r.Sent), sx(r.Done), y, y)
		}
		if len(r.Ticks) > 0 {
			var p strings.Builder
			for _, tk := range r.Ticks {
				fmt.Fprintf(&p, "M%.0f %.0fv8", sx(tk), y-4)
			}
			fmt.Fprintf(&b, `<path class="chunk" d="%s"/>`, p.String())
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	note := "Dashed: scheduled to sent (the client's lateness). Thin: sent to first token. Bar: first to last token, a mark per chunk. Red: a failed request, to its end, with its error class."
	if t.More > 0 {
		note += fmt.Sprintf(" %d more requests of this run are not drawn.", t.More)
	}
	fmt.Fprintf(&b, `<p class="note">%s</p></figure>`, esc(note))
	return template.HTML(b.String())
}

func failedRows(t *Timeline) int {
	n := 0
	for _, r := range t.Rows {
		if r.Error != "" {
			n++
		}
	}
	return n
}

func rowTitle(r TimelineRow) string {
	ms := func(v int64) string { return fmt.Sprintf("%.1f ms", float64(v)/1e6) }
	s := fmt.Sprintf("%s: scheduled %s, sent %s", r.ID, ms(r.Scheduled), ms(r.Sent))
	if r.First > 0 {
		s += fmt.Sprintf(", first token %s, last %s, %d chunks", ms(r.First), ms(r.Last), len(r.Ticks))
	}
	if r.Error != "" {
		s += ", failed: " + r.Error
	}
	return s
}

func clipID(id string) string {
	if len(id) > 14 {
		return "…" + id[len(id)-13:]
	}
	return id
}
