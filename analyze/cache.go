package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// What a server's prompt cache saved (docs/METRICS.md, "Prompt cache").
// A warm request's TTFT is set against the TTFT a cold request of the same
// prompt length had in the same run conditions: a least-squares line
// TTFT = a + b·prompt tokens through the cold requests of the same label
// and load (concurrency and rate), read only inside the lengths those
// cold requests span. Where that cannot be done the metric is absent and
// the group's Notes say why: a saving is never extrapolated or guessed.

// warmReq is one warm request: its prompt length in tokens and its TTFT
// in ms.
type warmReq struct{ x, ttft float64 }

// maxWarm bounds the warm requests one run keeps (16 bytes each, 16 MiB):
// past it prefill_saved is absent for the run's groups, with a note,
// rather than estimated from a part chosen by arrival order.
const maxWarm = 1 << 20

// minCold is the fewest cold requests a line is fitted through.
const minCold = 3

// lineFit accumulates a least-squares line y = a + b·x in one pass
// (Welford's co-moments: no cancellation at large x) and merges with
// another (Chan et al.), with the range of x seen.
type lineFit struct {
	n, mx, my, sxx, sxy float64
	lo, hi              float64
}

func (l *lineFit) add(x, y float64) {
	l.n++
	if l.n == 1 || x < l.lo {
		l.lo = x
	}
	if l.n == 1 || x > l.hi {
		l.hi = x
	}
	dx := x - l.mx
	l.mx += dx / l.n
	l.my += (y - l.my) / l.n
	l.sxx += dx * (x - l.mx)
	l.sxy += dx * (y - l.my)
}

func (l *lineFit) merge(o *lineFit) {
	if o.n == 0 {
		return
	}
	if l.n == 0 {
		*l = *o
		return
	}
	n := l.n + o.n
	dx, dy := o.mx-l.mx, o.my-l.my
	l.sxx += o.sxx + dx*dx*l.n*o.n/n
	l.sxy += o.sxy + dx*dy*l.n*o.n/n
	l.mx += dx * o.n / n
	l.my += dy * o.n / n
	l.lo, l.hi = math.Min(l.lo, o.lo), math.Max(l.hi, o.hi)
	l.n = n
}

// at is the line's value at x.
func (l *lineFit) at(x float64) float64 { return l.my + l.sxy/l.sxx*(x-l.mx) }

// cacheAcc is a run's prompt-cache facts: the server-reported cached
// tokens, the cold requests' line and the warm requests.
type cacheAcc struct {
	cachedSum int64
	cold      lineFit
	warm      []warmReq
	overflow  bool // more than maxWarm warm requests
}

// promptLen is the prompt as the server saw it: its own count where it
// sends one, else the whole conversation as sent (trace 1.4), else the
// workload's count.
func promptLen(f *facts, rec *trace.Record) int {
	switch {
	case f.promptTokens > 0:
		return f.promptTokens
	case rec.SentInputTokens > 0:
		return rec.SentInputTokens
	}
	return rec.InputTokens
}

// observe files one successful request as warm, cold or neither.
func (c *cacheAcc) observe(f *facts, rec *trace.Record, h *trace.Header) {
	x := promptLen(f, rec)
	cached := f.timers().cached
	if cached > x && x > 0 {
		cached = -1 // more cached than the prompt holds: not a count
	}
	if cached > 0 {
		c.cachedSum += int64(cached)
	}
	if f.content == 0 || f.ttft <= 0 || x <= 0 {
		return
	}
	var warm bool
	switch {
	case cached > 0:
		warm = true
	case cached == 0:
		warm = false
	case rec.Turn >= 2:
		// No count: a later turn resends the conversation before it.
		warm = true
	case !h.Salt && strings.HasPrefix(h.Options["prefix"], "shared"):
		// No count, and every prompt starts with the same tokens: a first
		// turn may be warm or cold, so it is neither.
		return
	}
	if !warm {
		c.cold.add(float64(x), ms(f.ttft))
		return
	}
	if len(c.warm) >= maxWarm {
		c.overflow = true
		return
	}
	c.warm = append(c.warm, warmReq{float64(x), ms(f.ttft)})
}

// coldRef is the cold line of one label and load, or why there is none.
type coldRef struct {
	fit lineFit
	why string
}

// loadKey names the conditions whose cold requests a warm one is held
// against: the same label (server) at the same concurrency and rate.
func loadKey(r *run) string {
	return fmt.Sprintf("%s\x00%d\x00%v", r.trace.info.Label, r.phase.Concurrency, r.phase.Rate)
}

// coldRefFor pools the cold requests of every phase run under r's label
// and load and fits their line (once per key).
func (res *Result) coldRefFor(r *run) *coldRef {
	k := loadKey(r)
	if c, ok := res.coldFits[k]; ok {
		return c
	}
	c := &coldRef{}
	for _, p := range res.runs {
		if loadKey(p) == k {
			c.fit.merge(&p.cache.cold)
		}
	}
	where := fmt.Sprintf("%s at %s", r.trace.info.Label, loadText(r.phase))
	switch {
	case c.fit.n == 0:
		c.why = "no cold requests (server-reported cached tokens 0, or a first turn where no count is reported) of " + where + " to compare with"
	case c.fit.n < minCold:
		c.why = fmt.Sprintf("only %d cold requests of %s: the cold line needs at least %d", int(c.fit.n), where, minCold)
	case c.fit.hi <= c.fit.lo || c.fit.sxx <= 0:
		c.why = fmt.Sprintf("the cold requests of %s all have one prompt length (%s tokens): a line needs two lengths or more (run prompts of several lengths, e.g. --input-tokens 500,1000,2000)", where, GroupDigits(int64(c.fit.lo)))
	}
	if res.coldFits == nil {
		res.coldFits = map[string]*coldRef{}
	}
	res.coldFits[k] = c
	return c
}

func loadText(p trace.Phase) string {
	if p.Rate > 0 {
		return fmt.Sprintf("rate %v/s", p.Rate)
	}
	return fmt.Sprintf("concurrency %d", p.Concurrency)
}

// fillCache computes prefill_saved and cache_speedup of g from its warm
// requests and their runs' cold lines, and notes why they are absent (or
// leave warm requests out).
func (res *Result) fillCache(g *Group) {
	var saved, speed Dist
	warm, outside := 0, 0
	var why string
	var wLo, wHi, cLo, cHi float64
	for _, r := range g.runs {
		if r.cache.overflow {
			why = fmt.Sprintf("a run holds more than %s warm requests, more than the analysis keeps", GroupDigits(maxWarm))
			warm += len(r.cache.warm)
			continue
		}
		if len(r.cache.warm) == 0 {
			continue
		}
		warm += len(r.cache.warm)
		ref := res.coldRefFor(r)
		if ref.why != "" {
			why = ref.why
			continue
		}
		for _, w := range r.cache.warm {
			if w.x < ref.fit.lo || w.x > ref.fit.hi {
				if outside == 0 || w.x < wLo {
					wLo = w.x
				}
				if outside == 0 || w.x > wHi {
					wHi = w.x
				}
				cLo, cHi = ref.fit.lo, ref.fit.hi
				outside++
				continue
			}
			cold := ref.fit.at(w.x)
			saved.Add(cold - w.ttft)
			if cold > 0 && w.ttft > 0 {
				speed.Add(cold / w.ttft)
			}
		}
	}
	for _, m := range []struct {
		name string
		d    *Dist
	}{{"prefill_saved", &saved}, {"cache_speedup", &speed}} {
		// llmreplay's own metrics: their percentiles interpolate whatever
		// the definition set.
		setDistValues(g, Metrics[metricIndex[m.name]], m.d, &DefinitionSet{}, res.want[m.name])
		g.samples[m.name] = m.d.Values()
	}
	note := ""
	switch {
	case warm == 0:
		// Nothing to save: the metric is absent without a note, as every
		// single-turn group of an uncached run would otherwise carry one.
	case saved.N() > 0 && outside == 0 && why == "":
	case why != "" && saved.N() == 0:
		note = why
	case outside > 0 && saved.N() == 0:
		note = fmt.Sprintf("every warm prompt (%s–%s tokens) lies outside the cold requests' lengths (%s–%s tokens): a cold TTFT there would be extrapolated", GroupDigits(int64(wLo)), GroupDigits(int64(wHi)), GroupDigits(int64(cLo)), GroupDigits(int64(cHi)))
	case outside > 0:
		note = fmt.Sprintf("%d of %d warm requests left out: their prompts (%s–%s tokens) lie outside the cold requests' lengths (%s–%s tokens)", outside, warm, GroupDigits(int64(wLo)), GroupDigits(int64(wHi)), GroupDigits(int64(cLo)), GroupDigits(int64(cHi)))
	case why != "":
		note = fmt.Sprintf("%d of %d warm requests left out: %s", warm-int(saved.N())-outside, warm, why)
	}
	if note != "" {
		if g.Notes == nil {
			g.Notes = map[string]string{}
		}
		g.Notes["prefill_saved"] = note
		g.Notes["cache_speedup"] = note
	}
}

// cacheMetrics are the prompt-cache metrics computed from whole runs
// (docs/METRICS.md, "Prompt cache"); cache_hit_rate and
// server_cached_tokens are per request, in server.go.
var cacheMetrics = []*Metric{
	{
		Name: "cached_tokens", Unit: "tokens", Scope: Count, HigherIsBetter: true,
		Doc: "prompt tokens the server says it served from its cache, summed over the group's successful requests (Σ server_cached_tokens; a count above the request's prompt is not used): the tokens the cache saved prefilling",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return float64(r.cache.cachedSum), true },
	},
	{
		Name: "prefill_saved", Unit: "ms", Scope: PerRequest, HigherIsBetter: true,
		Doc: "TTFT the prompt cache saved a warm request: cold(L) − its TTFT, where L is its prompt length (server count, else as sent) and cold(L) = a + b·L is the least-squares line of TTFT on prompt length through the cold requests of the same label and load (concurrency, rate), read only inside their lengths; warm: server-reported cached tokens > 0 (no count reported: session turn ≥ 2), cold: reported 0 (no count: a first turn, not of an unsalted --prefix shared run); absent with a note when there are fewer than 3 cold requests, one cold length, or no warm prompt within the cold lengths",
	},
	{
		Name: "cache_speedup", Unit: "x", Scope: PerRequest, HigherIsBetter: true,
		Doc: "how much faster a warm request's first token came than a cold one's of the same length: cold(L) / its TTFT, over the warm requests prefill_saved uses (1: the cache saved nothing)",
	},
}
