package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
)

// Chart geometry in SVG user units; the page scales it to its width.
const (
	chartW, chartH         = 640, 300
	padL, padR, padT, padB = 64, 16, 16, 48
	// ticks is the most intervals a chart's value axis is cut into.
	ticks = 7
	// logSpan is how many times the largest x may exceed the smallest
	// before the axis turns logarithmic: over two decades (inter-token
	// gaps of 0.05 to 400 ms, prompts of 100 to 10,000 tokens) a linear
	// axis squashes all but the largest values against zero.
	logSpan = 100
)

// dashes are the line styles of a label's variants (its percentiles), in
// the order the variants first appear: solid, dashed, dotted, dash-dot.
var dashes = []string{"", "6 4", "1.5 3", "8 3 1.5 3"}

// axis maps data values to one dimension of the plot and names its ticks.
type axis struct {
	lo, hi float64
	log    bool
	ticks  []float64
}

// pos is v's place along the axis, from 0 (lo) to 1 (hi).
func (a axis) pos(v float64) float64 {
	if a.log {
		return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// niceStep is the step of 1, 2 or 5 times a power of ten that cuts span
// into at most n intervals: ticks on 0, 200, 400, never on 103, 206, 309.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// linearAxis runs from zero (or from the smallest value when it is
// negative) to the first whole step at or above the largest, with a tick
// at every step, n intervals at most.
func linearAxis(min, max float64, n int) axis {
	lo := math.Min(0, min)
	if max <= lo {
		max = lo + 1
	}
	step := niceStep(max-lo, n)
	a := axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(max/step-1e-9) * step}
	for i := 0; ; i++ {
		v := a.lo + float64(i)*step
		if v > a.hi+step/2 {
			break
		}
		a.ticks = append(a.ticks, math.Round(v/step)*step)
	}
	return a
}

// logAxis runs over whole decades around the values, ticks at 1, 2 and 5
// times each power of ten (only the powers when the span is wide).
func logAxis(min, max float64) axis {
	a := axis{lo: math.Pow(10, math.Floor(math.Log10(min))), hi: math.Pow(10, math.Ceil(math.Log10(max))), log: true}
	if a.hi <= a.lo {
		a.hi = a.lo * 10
	}
	mults := []float64{1, 2, 5}
	if a.hi/a.lo > 1e4 {
		mults = []float64{1}
	}
	for d := a.lo; d <= a.hi*(1+1e-9); d *= 10 {
		for _, m := range mults {
			if v := d * m; v <= a.hi*(1+1e-9) {
				a.ticks = append(a.ticks, v)
			}
		}
	}
	return a
}

// spansDecades reports whether positive values span more than logSpan.
func spansDecades(min, max float64) bool {
	return min > 0 && max/min >= logSpan
}

// colourOf picks each series' colour: series of one label share their
// label's colour (colours, the report's order of labels, so a label keeps
// its colour on every chart and in the summary); a series without a label
// takes its own by position. dashOf picks the line style of a series'
// variant, in the order the variants appear on the chart.
func colourOf(c Chart, colours map[string]int) (colour func(i int) int, dash func(i int) int) {
	variants := map[string]int{}
	for _, s := range c.Series {
		if _, ok := variants[s.Variant]; !ok && s.Variant != "" {
			variants[s.Variant] = len(variants)
		}
	}
	colour = func(i int) int {
		if l := c.Series[i].Label; l != "" {
			if k, ok := colours[l]; ok {
				return k % 8
			}
		}
		return i % 8
	}
	dash = func(i int) int { return variants[c.Series[i].Variant] % len(dashes) }
	return colour, dash
}

// drawChart writes c as inline SVG. Colours are CSS classes (s0…s7) so the
// page's prefers-color-scheme rules pick them; every text goes through
// esc because series names come from traces.
func drawChart(c Chart, colours map[string]int) template.HTML {
	var b strings.Builder
	points := 0
	for _, s := range c.Series {
		points += len(s.Points)
	}
	fmt.Fprintf(&b, `<figure class="chart" id="%s" data-series="%d" data-points="%d"><figcaption>%s</figcaption>`,
		esc(c.ID), len(c.Series), points, esc(c.Title))
	if points == 0 {
		b.WriteString(`<p class="empty">No value to draw: the analysis has none for this chart.</p></figure>`)
		return template.HTML(b.String())
	}
	// xpos is the smallest positive x: a logarithmic axis starts at its
	// decade, and draws a zero (an inter-token gap of 0 ms) at its edge.
	x0, x1, y0, y1, xpos := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1), math.Inf(1)
	distinct := map[float64]bool{}
	for _, s := range c.Series {
		for _, p := range s.Points {
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			if p.X > 0 {
				xpos = math.Min(xpos, p.X)
			}
			y0, y1 = math.Min(y0, p.Y), math.Max(y1, p.Y)
			if !math.IsNaN(p.Hi) {
				y1 = math.Max(y1, p.Hi)
			}
			if !math.IsNaN(p.Lo) {
				y0 = math.Min(y0, p.Lo)
			}
			distinct[p.X] = true
		}
	}
	var xa axis
	if x0 >= 0 && spansDecades(xpos, x1) {
		xa = logAxis(xpos, x1)
	} else {
		xa = linearAxis(x0, x1, ticks)
	}
	// Few distinct x values (concurrency levels, input lengths) get a tick
	// each, so the axis names the levels that were measured.
	if c.TickData && len(distinct) <= 12 {
		xa.ticks = xa.ticks[:0]
		for x := range distinct {
			xa.ticks = append(xa.ticks, x)
		}
		sort.Float64s(xa.ticks)
	}
	ya := linearAxis(y0, y1, ticks)
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	sx := func(x float64) float64 { return padL + xa.pos(math.Max(x, xa.lo))*pw }
	sy := func(y float64) float64 { return padT + ph - ya.pos(y)*ph }

	scale := "linear"
	if xa.log {
		scale = "log"
	}
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" data-x-scale="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, esc(c.Title), scale)
	fmt.Fprintf(&b, `<rect class="frame" x="%d" y="%d" width="%.0f" height="%.0f"/>`, padL, padT, pw, ph)
	for _, yv := range ya.ticks {
		yy := sy(yv)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick y" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+pw, yy, yy, padL-6, yy+4, esc(short(yv)))
	}
	for _, xv := range xa.ticks {
		xx := sx(xv)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"/><text class="tick x" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			xx, xx, padT, padT+ph, xx, padT+ph+16, esc(short(xv)))
	}
	xlabel := c.XLabel
	if xa.log {
		xlabel += ", log scale"
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">%s</text>`, padL+pw/2, chartH-8, esc(xlabel))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, padT+ph/2, esc(c.YLabel))
	colour, dash := colourOf(c, colours)
	for i, s := range c.Series {
		fmt.Fprintf(&b, `<g class="series s%d" data-name="%s" data-points="%d">`, colour(i), esc(s.Name), len(s.Points))
		var path strings.Builder
		for j, p := range s.Points {
			if j == 0 {
				fmt.Fprintf(&path, "M%.1f %.1f", sx(p.X), sy(p.Y))
			} else {
				fmt.Fprintf(&path, " L%.1f %.1f", sx(p.X), sy(p.Y))
			}
		}
		dashAttr := ""
		if d := dashes[dash(i)]; d != "" {
			dashAttr = fmt.Sprintf(` stroke-dasharray="%s"`, d)
		}
		fmt.Fprintf(&b, `<path class="line" d="%s"%s/>`, path.String(), dashAttr)
		for _, p := range s.Points {
			if !math.IsNaN(p.Lo) && !math.IsNaN(p.Hi) {
				fmt.Fprintf(&b, `<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(p.X), sx(p.X), sy(p.Lo), sy(p.Hi))
			}
			fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="3"><title>%s: %s %s at %s</title></circle>`,
				sx(p.X), sy(p.Y), esc(s.Name), esc(short(p.Y)), esc(c.Unit), esc(short(p.X)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	writeLegend(&b, c, colour, dash)
	if c.Note != "" {
		fmt.Fprintf(&b, `<p class="note">%s</p>`, esc(c.Note))
	}
	b.WriteString(`</figure>`)
	return template.HTML(b.String())
}

// writeLegend names what the lines are: a colour per label (or per series
// when the chart has no labels), a line style per variant (p50 solid, p90
// dashed …), and the unit of the values.
func writeLegend(b *strings.Builder, c Chart, colour, dash func(int) int) {
	b.WriteString(`<ul class="legend">`)
	seen := map[string]bool{}
	for i, s := range c.Series {
		name := s.Name
		if s.Label != "" {
			name = s.Label
		}
		if seen["\x00c"+name] {
			continue
		}
		seen["\x00c"+name] = true
		fmt.Fprintf(b, `<li><span class="sw s%d"></span>%s</li>`, colour(i), esc(name))
	}
	for i, s := range c.Series {
		if s.Variant == "" || seen["\x00v"+s.Variant] {
			continue
		}
		seen["\x00v"+s.Variant] = true
		dashAttr := ""
		if d := dashes[dash(i)]; d != "" {
			dashAttr = fmt.Sprintf(` stroke-dasharray="%s"`, d)
		}
		fmt.Fprintf(b, `<li class="variant"><svg class="key" viewBox="0 0 28 8" aria-hidden="true"><line x1="0" x2="28" y1="4" y2="4"%s/></svg>%s</li>`, dashAttr, esc(s.Variant))
	}
	if c.Unit != "" {
		fmt.Fprintf(b, `<li class="unit">values in %s</li>`, esc(c.Unit))
	}
	b.WriteString(`</ul>`)
}

// short prints an axis number compactly (1.2k, 35, 0.25).
func short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
