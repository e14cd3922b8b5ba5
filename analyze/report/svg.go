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
	ticks                  = 5
)

// drawChart writes c as inline SVG. Colours are CSS classes (s0…s7) so the
// page's prefers-color-scheme rules pick them; every text goes through
// esc because series names come from traces.
func drawChart(c Chart) template.HTML {
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
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
			y1 = math.Max(y1, p.Y)
			if !math.IsNaN(p.Hi) {
				y1 = math.Max(y1, p.Hi)
			}
			if !math.IsNaN(p.Lo) {
				y0 = math.Min(y0, p.Lo)
			}
		}
	}
	distinct := map[float64]bool{}
	for _, s := range c.Series {
		for _, p := range s.Points {
			distinct[p.X] = true
		}
	}
	var xs []float64
	if c.TickData && len(distinct) <= 12 {
		for x := range distinct {
			xs = append(xs, x)
		}
		sort.Float64s(xs)
	}
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	y1 *= 1.05
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	sx := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*pw }
	sy := func(y float64) float64 { return padT + ph - (y-y0)/(y1-y0)*ph }

	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, esc(c.Title))
	fmt.Fprintf(&b, `<rect class="frame" x="%d" y="%d" width="%.0f" height="%.0f"/>`, padL, padT, pw, ph)
	for i := 0; i <= ticks; i++ {
		yv := y0 + (y1-y0)*float64(i)/ticks
		yy := sy(yv)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+pw, yy, yy, padL-6, yy+4, esc(short(yv)))
		if len(xs) == 0 {
			xv := x0 + (x1-x0)*float64(i)/ticks
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, sx(xv), padT+ph+16, esc(short(xv)))
		}
	}
	// Few distinct x values (concurrency levels, input lengths) get a tick
	// each, so the axis names the levels that were measured.
	for _, xv := range xs {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, sx(xv), padT+ph+16, esc(short(xv)))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">%s</text>`, padL+pw/2, chartH-8, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, padT+ph/2, esc(c.YLabel))
	for i, s := range c.Series {
		cls := fmt.Sprintf("s%d", i%8)
		fmt.Fprintf(&b, `<g class="series %s" data-name="%s" data-points="%d">`, cls, esc(s.Name), len(s.Points))
		var path strings.Builder
		for j, p := range s.Points {
			if j == 0 {
				fmt.Fprintf(&path, "M%.1f %.1f", sx(p.X), sy(p.Y))
			} else {
				fmt.Fprintf(&path, " L%.1f %.1f", sx(p.X), sy(p.Y))
			}
		}
		fmt.Fprintf(&b, `<path class="line" d="%s"/>`, path.String())
		for _, p := range s.Points {
			if !math.IsNaN(p.Lo) && !math.IsNaN(p.Hi) {
				fmt.Fprintf(&b, `<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>`, sx(p.X), sx(p.X), sy(p.Lo), sy(p.Hi))
			}
			fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="3"><title>%s: %s at %s</title></circle>`,
				sx(p.X), sy(p.Y), esc(s.Name), esc(short(p.Y)), esc(short(p.X)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg><ul class="legend">`)
	for i, s := range c.Series {
		fmt.Fprintf(&b, `<li><span class="sw s%d"></span>%s</li>`, i%8, esc(s.Name))
	}
	b.WriteString(`</ul>`)
	if c.Note != "" {
		fmt.Fprintf(&b, `<p class="note">%s</p>`, esc(c.Note))
	}
	b.WriteString(`</figure>`)
	return template.HTML(b.String())
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
