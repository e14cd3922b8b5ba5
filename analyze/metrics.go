package analyze

import (
	"fmt"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/suggest"
)

// Scope says what one sample of a metric is, and so which statistics a
// group reports for it.
type Scope int

const (
	// PerRequest metrics have one value per successful request; a group
	// reports their median (with a 95% interval) and mean, min, max, p10,
	// p50, p90, p99.
	PerRequest Scope = iota
	// PerToken metrics have one value per token or chunk gap (inter-token
	// latency); same statistics as PerRequest.
	PerToken
	// PerRun metrics have one value per run (one phase of one trace: one
	// concurrency level, input length and repeat); a group reports the
	// median over its runs (repeats) with an interval, and mean, min, max.
	PerRun
	// Count metrics are summed over a group's runs.
	Count
	// PerGroup metrics are computed from whole groups (speed-up).
	PerGroup
	// AcrossInputs metrics are fitted over the input lengths of a group's
	// runs (how TTFT scales with the prompt); they need two lengths or
	// more and carry a 95% interval from the fit.
	AcrossInputs
)

// Metric is one entry of the registry: a name shared by tables, JSON and
// claims, a unit, a definition, and the function that computes it. Adding a
// metric is adding one entry to Metrics.
type Metric struct {
	Name string
	Unit string // ms, tok/s, tokens, req/s, requests, x
	// HigherIsBetter orders comparisons and claims' natural direction.
	HigherIsBetter bool
	Scope          Scope
	// Doc is the definition with its formula, as `analyze --list-metrics`
	// prints it.
	Doc string

	request func(f *facts, d *DefinitionSet, out *Dist)
	run     func(r *run, d *DefinitionSet) (float64, bool)
	group   func(g, base *Group) (float64, bool)
	// fit names the per-request metric whose logarithm an AcrossInputs
	// metric fits against the logarithm of the input length.
	fit string
}

// Stats lists the statistic suffixes a metric supports; "" is the bare
// name (a median for distributions and per-run metrics, the sum for
// counts).
func (m *Metric) Stats() []string {
	switch m.Scope {
	case PerRequest, PerToken:
		return []string{"", "mean", "min", "max", "p10", "p50", "p90", "p99"}
	case PerRun:
		return []string{"", "mean", "min", "max"}
	}
	return []string{""}
}

func okOnly(f *facts) bool { return f.ok }

// sample is one request's value of a per-request metric under a
// definition set, or false when the request has none.
type sample func(f *facts, d *DefinitionSet) (float64, bool)

// okSample is the request function of a metric with at most one sample
// per successful request.
func okSample(own sample) func(*facts, *DefinitionSet, *Dist) {
	return peerOr(nil, own)
}

// peerOr is okSample whose value, under a peer's definition set, is
// peer's, of the requests that set counts as successful; a nil peer means
// the metric reads the same under every set.
func peerOr(peer, own sample) func(*facts, *DefinitionSet, *Dist) {
	return func(f *facts, d *DefinitionSet, out *Dist) {
		if d.peer && peer != nil {
			if v, ok := peer(f, d); ok && f.peerOK(d) {
				out.AddN(v, 1)
			}
			return
		}
		if !okOnly(f) {
			return
		}
		if v, ok := own(f, d); ok {
			out.AddN(v, 1)
		}
	}
}

// runRate is the run function of a per-run rate: under a peer's
// definition set, that set's rate of what; otherwise n over the seconds
// span gives, none when that span is empty.
func runRate(what string, n func(r *run) float64, span func(r *run, d *DefinitionSet) float64) func(*run, *DefinitionSet) (float64, bool) {
	return func(r *run, d *DefinitionSet) (float64, bool) {
		if d.peer {
			return r.peerRate(d, what)
		}
		w := span(r, d)
		if w <= 0 {
			return 0, false
		}
		return n(r) / w, true
	}
}

// doneSpan is the seconds from the run's first send to its last response
// end, the span of the request rates.
func (r *run) doneSpan(*DefinitionSet) float64 {
	return float64(r.lastDone-r.firstSend) / 1e9
}

// Metrics is the registry, in display order. The server-timer metrics live
// in server.go beside their parsing and come after the client metrics they
// are set beside.
var Metrics = append([]*Metric{
	{
		Name: "ttft", Unit: "ms", Scope: PerRequest,
		Doc: "time to first token: arrival of the first chunk carrying text or reasoning − the actual send (successful requests)",
		request: peerOr(func(f *facts, d *DefinitionSet) (float64, bool) {
			v, ok := f.peerTTFT(d)
			return v, ok && (!d.ttftNeedsTokens || f.pv.tokens > 0)
		}, func(f *facts, _ *DefinitionSet) (float64, bool) { return ms(f.ttft), f.content > 0 }),
	},
	{
		Name: "ttft_sched", Unit: "ms", Scope: PerRequest,
		Doc:     "time to first token from the scheduled send: first content chunk − scheduled time (includes the client's lateness; what an open-loop user sees)",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) { return ms(f.first - f.rec.Scheduled), f.content > 0 }),
	},
	{
		Name: "e2e", Unit: "ms", Scope: PerRequest,
		Doc: "end-to-end latency: response end − actual send (successful requests)",
		request: peerOr(func(f *facts, _ *DefinitionSet) (float64, bool) { return f.peerE2E() },
			func(f *facts, _ *DefinitionSet) (float64, bool) { return ms(f.e2e), f.e2e > 0 }),
	},
	{
		Name: "output_tokens", Unit: "tokens", Scope: PerRequest, HigherIsBetter: true,
		Doc: "output tokens of a successful request: server usage completion_tokens, else the server's per-chunk counts, else the tokenizer count of the received text (summed per chunk), else the number of content chunks; the source is reported per group",
		request: peerOr(func(f *facts, _ *DefinitionSet) (float64, bool) { return float64(f.pv.tokens), f.pv.tokens >= 0 },
			func(f *facts, _ *DefinitionSet) (float64, bool) { return float64(f.tokens), true }),
	},
	{
		Name: "output_tokens_text", Unit: "tokens", Scope: PerRequest,
		Doc:     "output tokens counted in the received text (text + reasoning, per chunk, with the trace's tokenizer; chunks when it cannot be loaded), whatever the server reported: set beside output_tokens it shows the mismatch between sources",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) { return float64(f.tokenizerTokens), true }),
	},
	{
		Name: "ttft_reasoning", Unit: "ms", Scope: PerRequest,
		Doc: "time to first reasoning token: arrival of the first chunk carrying reasoning (reasoning_content, Anthropic thinking, Responses reasoning events) − the actual send; successful requests that streamed reasoning",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			return ms(f.firstReasoning - f.rec.Sent), f.firstReasoning > 0
		}),
	},
	{
		Name: "ttft_answer", Unit: "ms", Scope: PerRequest,
		Doc: "time to first answer token: arrival of the first chunk carrying answer text (not reasoning) − the actual send, what a user waits for before the answer starts (AIPerf's time_to_first_output_token); equal to ttft without reasoning; successful requests that streamed answer text",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			return ms(f.firstAnswer - f.rec.Sent), f.firstAnswer > 0
		}),
	},
	{
		Name: "reasoning_tokens", Unit: "tokens", Scope: PerRequest,
		Doc:     "reasoning tokens of a successful request: the server's count inside its usage (completion_tokens_details or output_tokens_details .reasoning_tokens) when it sends one with its output count, else the reasoning chunks' tokens (a reasoning-only chunk's server count, else the tokenizer's count of its reasoning); 0 without reasoning; never above output_tokens",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) { return float64(f.reasoningTokens()), true }),
	},
	{
		Name: "answer_tokens", Unit: "tokens", Scope: PerRequest,
		Doc: "answer tokens of a successful request: output_tokens − reasoning_tokens, so the two add up to output_tokens",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			return float64(max(f.tokens, 0) - f.reasoningTokens()), true
		}),
	},
	{
		Name: "per_stream_tps", Unit: "tok/s", Scope: PerRequest, HigherIsBetter: true,
		Doc:     "one stream's generation speed: (output_tokens − 1) / (last content chunk − first content chunk); excludes TTFT, as a chat user feels the stream (the per-stream half of the concurrency sweep; each --definitions set's own: docs/METRICS.md, Definition sets)",
		request: peerOr((*facts).peerStream, (*facts).perStream),
	},
	{
		Name: "tpot", Unit: "ms", Scope: PerRequest,
		Doc: "time per output token: (e2e − ttft) / (output_tokens − 1), first token excluded (each --definitions set's own: docs/METRICS.md, Definition sets)",
		request: func(f *facts, d *DefinitionSet, out *Dist) {
			if d.peer {
				if v, w, ok := f.peerTPOT(d); ok && f.peerOK(d) {
					if d.weighted {
						out.AddWeighted(v, w)
					} else {
						out.AddN(v, 1)
					}
				}
				return
			}
			if !okOnly(f) {
				return
			}
			if v, ok := f.tpotMs(d); ok {
				out.AddN(v, 1)
			}
		},
	},
	{
		Name: "itl", Unit: "ms", Scope: PerToken,
		Doc: "inter-token latency per token: a chunk carrying k tokens after a gap g contributes k samples of g/k; the first chunk's tokens arrive with the TTFT and contribute none (each --definitions set's own: docs/METRICS.md, Definition sets)",
		request: func(f *facts, d *DefinitionSet, out *Dist) {
			if d.peer {
				if f.peerOK(d) {
					f.peerITL(d, out)
				}
				return
			}
			if okOnly(f) {
				f.itl(d, out)
			}
		},
	},
	{
		Name: "itl_chunk", Unit: "ms", Scope: PerToken,
		Doc: "inter-chunk latency: one sample per gap between consecutive content chunks, whatever their token counts",
		request: func(f *facts, _ *DefinitionSet, out *Dist) {
			if okOnly(f) {
				f.itl(&perChunkDefs, out)
			}
		},
	},
	{
		Name: "prefill_tps", Unit: "tok/s", Scope: PerRequest, HigherIsBetter: true,
		Doc: "prefill speed: input tokens / TTFT, input tokens from usage prompt_tokens when present, else the workload's count (an upper bound on queueing-free prefill: TTFT includes network and queueing)",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			return float64(f.input) / (float64(f.ttft) / 1e9), f.content > 0 && f.ttft > 0 && f.input > 0
		}),
	},
	{
		Name: "lateness", Unit: "ms", Scope: PerRequest,
		Doc: "send lateness: actual send − scheduled send, every request that was sent (the client falling behind its schedule)",
		request: func(f *facts, _ *DefinitionSet, out *Dist) {
			if f.rec.Sent > 0 || f.rec.Scheduled == 0 {
				out.AddN(ms(f.rec.Sent-f.rec.Scheduled), 1)
			}
		},
	},
	{
		Name: "requests_ok", Unit: "requests", Scope: Count, HigherIsBetter: true,
		Doc: "requests that completed without error (warm-up requests excluded)",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return float64(r.ok), true },
	},
	{
		Name: "requests_failed", Unit: "requests", Scope: Count,
		Doc: "requests that failed, any class; the JSON also breaks them down by error class",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return float64(r.failed), true },
	},
	{
		Name: "aggregate_tps", Unit: "tok/s", Scope: PerRun, HigherIsBetter: true,
		Doc: "all streams together: output tokens of the run's successful requests / (last content chunk − first send) (the sum over all streams, the aggregate half of the concurrency sweep; each --definitions set's own window: docs/METRICS.md, Definition sets)",
		run: runRate("out", func(r *run) float64 { return float64(r.outTokens) }, (*run).window),
	},
	{
		Name: "total_tps", Unit: "tok/s", Scope: PerRun, HigherIsBetter: true,
		Doc: "input and output tokens of the run's successful requests / the aggregate_tps window",
		run: runRate("total", func(r *run) float64 { return float64(r.outTokens + r.inTokens) }, (*run).window),
	},
	{
		Name: "requests_per_s", Unit: "req/s", Scope: PerRun, HigherIsBetter: true,
		Doc: "successful requests / (last response end − first send)",
		run: runRate("requests", func(r *run) float64 { return float64(r.ok) }, (*run).doneSpan),
	},
	{
		Name: "goodput", Unit: "req/s", Scope: PerRun, HigherIsBetter: true,
		Doc: "successful requests meeting every SLO bound (default ttft ≤ 2 s and tpot ≤ 50 ms; a request with fewer than 2 tokens has tpot 0) / (last response end − first send)",
		run: runRate("good", func(r *run) float64 { return float64(r.good) }, (*run).doneSpan),
	},
	{
		Name: "speedup", Unit: "x", Scope: PerGroup, HigherIsBetter: true,
		Doc: "continuous-batching speed-up: median aggregate_tps of the group / median aggregate_tps of the same label and input length at concurrency 1 (above 1: batching pays; e.g. 2 streams at 2.17× on one server, 0.85× on another that serialises them)",
		group: func(g, base *Group) (float64, bool) {
			if base == nil {
				return 0, false
			}
			a, b := g.Values["aggregate_tps"], base.Values["aggregate_tps"]
			if !a.Valid() || !b.Valid() || b.Value == 0 {
				return 0, false
			}
			return a.Value / b.Value, true
		},
	},
	{
		Name: "ttft_exponent", Unit: "exponent", Scope: AcrossInputs, fit: "ttft",
		Doc: "how TTFT scales with input length: k in ttft ∝ input_tokens^k, the slope of a least-squares fit of ln(ttft) on ln(input_tokens) over every successful request of the group's input lengths (two or more; 1: prefill linear in the prompt, 2: quadratic; a fixed cost pulls k below the prefill's own exponent); interval k ± t(0.975, n−2)·se(k)",
	},
	{
		Name: "prefill_tps_exponent", Unit: "exponent", Scope: AcrossInputs, fit: "prefill_tps",
		Doc: "how prefill speed scales with input length: k in prefill_tps ∝ input_tokens^k, fitted as ttft_exponent is (0: constant speed; −1: quadratic prefill, each doubling of the prompt halves the speed)",
	},
}, append(append(append(serverMetrics, cacheMetrics...), stateMetrics...), processMetrics...)...)

var metricIndex = func() map[string]int {
	m := make(map[string]int, len(Metrics))
	for i, x := range Metrics {
		m[x.Name] = i
	}
	return m
}()

// MetricName is the metric name name spells: per-stream-tps, as the
// flags spell their words, is per_stream_tps.
func MetricName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// LookupMetric returns the registry entry of a name (either spelling,
// MetricName), with or without a statistic suffix, and the suffix ("" for
// the bare name).
func LookupMetric(name string) (*Metric, string, error) {
	name = MetricName(name)
	if i, ok := metricIndex[name]; ok {
		return Metrics[i], "", nil
	}
	if j := strings.LastIndexByte(name, '_'); j > 0 {
		if i, ok := metricIndex[name[:j]]; ok {
			m, stat := Metrics[i], name[j+1:]
			for _, s := range m.Stats() {
				if s == stat && s != "" {
					return m, stat, nil
				}
			}
			if m.HasPercentiles() {
				if _, ok := ParsePercentile(stat); ok {
					return m, stat, nil
				}
				if strings.HasPrefix(stat, "p") {
					return nil, "", percentileError(m, stat)
				}
			}
			names := strings.Join(statNames(m), ", ")
			if m.HasPercentiles() {
				names += " or any percentile " + m.Name + "_pX (0 < X < 100, e.g. _p95, _p99.9)"
			}
			return nil, "", fmt.Errorf("metric %s has no statistic %q: use one of %s", m.Name, stat, names)
		}
	}
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return nil, "", fielderr.New("analyze", "Metric", fmt.Sprintf("%q is unknown%s", name, suggest.Phrase(name, names)), "see docs/METRICS.md (or analyze.Metrics) for the names")
}

func statNames(m *Metric) []string {
	var out []string
	for _, s := range m.Stats() {
		if s == "" {
			out = append(out, m.Name)
		} else {
			out = append(out, m.Name+"_"+s)
		}
	}
	return out
}

// IsTimeUnit reports whether values of m are milliseconds.
func (m *Metric) IsTimeUnit() bool { return m.Unit == "ms" }

// perChunkDefs reads inter-chunk latency whatever the chosen set says.
var perChunkDefs = DefinitionSet{itl: itlPerChunk}
