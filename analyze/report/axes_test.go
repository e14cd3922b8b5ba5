package report

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// Ticks fall on 1, 2 or 5 times a power of ten and axes start at zero: a
// largest value of 309 gets 0, 50, … 350 (never 103, 206, 309); an axis of
// fractions 0, 0.2 … 1.
func TestNiceLinearAxis(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []float64
	}{
		{6.72e-06, 309, []float64{0, 50, 100, 150, 200, 250, 300, 350}},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{490, 5782, []float64{0, 1000, 2000, 3000, 4000, 5000, 6000}},
		{-3, 7, []float64{-4, -2, 0, 2, 4, 6, 8}},
		{5, 5, []float64{0, 1, 2, 3, 4, 5}},
	} {
		a := linearAxis(c.min, c.max, ticks)
		if !floatsNear(a.ticks, c.want) || a.lo != c.want[0] || a.hi != c.want[len(c.want)-1] {
			t.Errorf("linearAxis(%g, %g): lo %g hi %g ticks %v, want %v", c.min, c.max, a.lo, a.hi, a.ticks, c.want)
		}
	}
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{309, 6, 100}, {1100, 8, 200}, {0.9, 6, 0.2}, {60, 6, 10}, {0, 6, 1}} {
		if got := niceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%g, %d) = %g, want %g", c.span, c.n, got, c.want)
		}
	}
}

// Values over two decades or more get a logarithmic axis over whole
// decades, ticked at 1, 2, 5 per decade; wider than four decades, at the
// powers of ten only.
func TestLogAxis(t *testing.T) {
	a := logAxis(0.3, 37.9)
	if !a.log || a.lo != 0.1 || a.hi != 100 || !floatsNear(a.ticks, []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}) {
		t.Errorf("logAxis(0.3, 37.9) = %+v", a)
	}
	if p := a.pos(10); math.Abs(p-2.0/3) > 1e-9 {
		t.Errorf("10 sits at %g of a 0.1–100 axis, want 2/3", p)
	}
	if w := logAxis(0.001, 400); !floatsNear(w.ticks, []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000}) {
		t.Errorf("a six-decade axis ticks at %v", w.ticks)
	}
	if spansDecades(1, 32) || !spansDecades(100, 10000) || spansDecades(0, 400) {
		t.Error("spansDecades: a sweep of 1–32 is linear, 100–10,000 tokens logarithmic, a zero cannot be")
	}
}

// One colour per label on a chart (its place in the report's labels),
// percentiles as line styles, and a legend that names labels, styles and
// the unit; an inter-token latency CDF spanning decades is drawn on a log
// axis with a zero gap at its edge.
func TestChartColoursStylesLegend(t *testing.T) {
	nan := math.NaN()
	pt := func(x, y float64) Point { return Point{X: x, Y: y, Lo: nan, Hi: nan} }
	c := Chart{ID: "ttft", Title: "TTFT", XLabel: "concurrency", YLabel: "ms", Unit: "ms", TickData: true, Series: []Series{
		{Name: "a p50", Label: "a", Variant: "p50", Points: []Point{pt(1, 50), pt(4, 90)}},
		{Name: "b p50", Label: "b", Variant: "p50", Points: []Point{pt(1, 160), pt(4, 500)}},
		{Name: "a p99", Label: "a", Variant: "p99", Points: []Point{pt(1, 55), pt(4, 101)}},
		{Name: "b p99", Label: "b", Variant: "p99", Points: []Point{pt(1, 166), pt(4, 601)}},
	}}
	page := string(drawChart(c, map[string]int{"b": 0, "a": 1}))
	series := regexp.MustCompile(`<g class="series (s\d)" data-name="([^"]+)"`).FindAllStringSubmatch(page, -1)
	colour := map[string]string{}
	for _, s := range series {
		colour[s[2]] = s[1]
	}
	if colour["a p50"] != "s1" || colour["a p99"] != "s1" || colour["b p50"] != "s0" || colour["b p99"] != "s0" {
		t.Errorf("colours by series: %v; want label a s1 and b s0 on both percentiles", colour)
	}
	paths := regexp.MustCompile(`<path class="line" d="[^"]*"( stroke-dasharray="[^"]*")?/>`).FindAllStringSubmatch(page, -1)
	if len(paths) != 4 || paths[0][1] != "" || paths[1][1] != "" || paths[2][1] == "" || paths[2][1] != paths[3][1] {
		t.Errorf("line styles: %q; want p50 solid, p99 dashed alike for both labels", paths)
	}
	for _, want := range []string{`<span class="sw s1"></span>a</li>`, `<span class="sw s0"></span>b</li>`, `</svg>p99</li>`, `values in ms</li>`,
		`class="tick y" x="58" y="20.0" text-anchor="end">700</text>`, `text-anchor="end">0</text>`} {
		if !strings.Contains(page, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Count(page, `<span class="sw`) != 2 {
		t.Errorf("the legend names a colour per series, not per label")
	}

	cdf := Chart{ID: "cdf-itl", XLabel: "ms", YLabel: "fraction ≤ x", Series: []Series{{Name: "a", Label: "a",
		Points: []Point{pt(0, 0), pt(3.1, 0.1), pt(3.2, 0.5), pt(3.4, 0.9), pt(37.9, 0.99), pt(412, 1)}}}}
	page = string(drawChart(cdf, map[string]int{"a": 0}))
	if !strings.Contains(page, `data-x-scale="log"`) || !strings.Contains(page, "ms, log scale") || !strings.Contains(page, `>100</text>`) {
		t.Errorf("an ITL distribution over decades is not on a log axis:\n%.600s", page)
	}
	if !strings.Contains(page, `<circle class="pt" cx="64.0"`) {
		t.Errorf("the zero gap is not drawn at the axis' edge")
	}
}

// With no -o the page goes beside the first trace.
func TestDefaultPath(t *testing.T) {
	for arg, want := range map[string]string{
		"results/a.trace.zst":      "results/report.html",
		"vllm=results/b.trace.zst": "results/report.html",
		"a.trace.zst":              "report.html",
		"-":                        "report.html",
		"piped=-":                  "report.html",
		"/tmp/x/y/run-1.trace.zst": "/tmp/x/y/report.html",
	} {
		if got := DefaultPath(arg); got != want {
			t.Errorf("DefaultPath(%q) = %q, want %q", arg, got, want)
		}
	}
}

func floatsNear(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}
