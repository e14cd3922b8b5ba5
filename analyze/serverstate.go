package analyze

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

// Server state: what the server's /metrics (and a watched process) said
// during each run, joined to the run by time. A trace of format 1.3 holds
// scrapes between its records (trace.Scrape); each successful one becomes
// a statePoint in common terms (servermetrics.Read), and each run reads
// the points of its own window: from its first send to its last response.
// docs/METRICS.md, "Server state", defines every figure.

type statePoint struct {
	t    int64
	v    [servermetrics.NumMeanings]float64 // NaN: not in this scrape
	ttft []servermetrics.Bucket             // the server's TTFT histogram, nil when none
}

// AddScrape takes one scrape of the trace. Only what the analysis needs is
// kept (a few numbers per scrape), so a long run's scrapes cost little.
func (t *TraceAcc) AddScrape(s *trace.Scrape) {
	if s.Source == trace.SourceClock {
		t.addClock(s) // the client's own clock, not the server's state
		return
	}
	t.info.Scrapes++
	if s.Error != "" {
		t.info.ScrapesFailed++
		if t.info.ScrapeError == "" {
			t.info.ScrapeError = s.Error
		}
		return
	}
	t.scrapedTimeScale(s)
	st := servermetrics.Read(s)
	if t.info.ServerEngine == "" {
		t.info.ServerEngine = st.Engine
	}
	p := statePoint{t: s.T, v: st.Value, ttft: st.TTFT}
	// Scrapes are written as they finish; two scraping goroutines (the
	// server's /metrics and a watched process) may interleave: keep the
	// points in time order.
	n := len(t.points)
	t.points = append(t.points, p)
	if n > 0 && t.points[n-1].t > p.t {
		sort.SliceStable(t.points, func(i, j int) bool { return t.points[i].t < t.points[j].t })
	}
}

// runState is what the server said during one run; NaN where it said
// nothing (no scrape in the window, or no known name for the figure).
type runState struct {
	runningPeak, runningAvg float64
	waitingPeak, waitingAvg float64
	kvPeak, kvAvg           float64
	preemptions             float64
	prefixHitRate           float64
	rssPeak, cpuCores       float64
	gpuPeak                 float64
	// The server's TTFT histogram over the run: its interpolated median
	// and the bounds of the bucket it falls in (ms), and how many first
	// tokens it counted; NaN and 0 without one.
	srvTTFT, srvTTFTLo, srvTTFTHi float64
	srvTTFTCount                  float64
	// ttftFrom and ttftTo are the scrapes the histogram's increase was
	// read between; ttftBracketed says one was taken at or before the
	// run's first send and one at or after its last response end.
	ttftFrom, ttftTo int64
	ttftBracketed    bool
	scrapes          int // successful scrapes inside the window
}

// serverState computes (once) the run's server state from its trace's
// points.
func (r *run) serverState() *runState {
	if r.state != nil {
		return r.state
	}
	nan := math.NaN()
	s := &runState{runningPeak: nan, runningAvg: nan, waitingPeak: nan, waitingAvg: nan, kvPeak: nan, kvAvg: nan, preemptions: nan,
		prefixHitRate: nan, rssPeak: nan, cpuCores: nan, gpuPeak: nan, srvTTFT: nan, srvTTFTLo: nan, srvTTFTHi: nan}
	r.state = s
	pts := r.trace.points
	// A turn run's requests interleave with the other turns' (a session's
	// turn 2 is sent before the next session's turn 1), so no scrape
	// window belongs to one turn: no server state per turn.
	if r.turn > 0 || len(pts) == 0 || r.firstSend == math.MaxInt64 || r.lastDone < r.firstSend {
		return s
	}
	from, to := r.firstSend, r.lastDone
	lo := sort.Search(len(pts), func(i int) bool { return pts[i].t >= from })
	hi := sort.Search(len(pts), func(i int) bool { return pts[i].t > to })
	in := pts[lo:hi]
	s.scrapes = len(in)
	s.runningPeak, s.runningAvg = peakMean(in, servermetrics.Running)
	s.waitingPeak, s.waitingAvg = peakMean(in, servermetrics.Waiting)
	s.kvPeak, s.kvAvg = peakMean(in, servermetrics.KVUsage)
	s.rssPeak, _ = peakMean(in, servermetrics.RSS)
	s.gpuPeak, _ = peakMean(in, servermetrics.GPUMemory)
	// Counters are read across the window: from the last scrape at or
	// before the first send to the first at or after the last response,
	// so the increase covers the whole run (and at most one interval
	// either side of it).
	cLo, cHi := lo, hi
	if cLo > 0 && (cLo == len(pts) || pts[cLo].t > from) {
		cLo--
	}
	if cHi < len(pts) && (cHi == 0 || pts[cHi-1].t < to) {
		cHi++
	}
	span := pts[cLo:cHi]
	s.preemptions, _ = increase(span, servermetrics.Preemptions)
	q, okQ := increase(span, servermetrics.PrefixQueries)
	h, okH := increase(span, servermetrics.PrefixHits)
	if okQ && okH && q > 0 {
		s.prefixHitRate = min(1, h/q)
	} else if _, m := peakMean(in, servermetrics.PrefixHitRate); !math.IsNaN(m) {
		s.prefixHitRate = m
	}
	if d := histIncrease(span); d != nil {
		if v, lo, hi, ok := servermetrics.Quantile(d, 0.5); ok {
			s.srvTTFT, s.srvTTFTLo, s.srvTTFTHi = v*1e3, lo*1e3, hi*1e3
			s.srvTTFTCount = d[len(d)-1].Count
			s.ttftFrom, s.ttftTo = firstWith(span, true), firstWith(span, false)
			s.ttftBracketed = s.ttftFrom <= from && s.ttftTo >= to
		}
	}
	if cpu, ok := increase(span, servermetrics.CPUSeconds); ok {
		if w := float64(span[len(span)-1].t-span[0].t) / 1e9; w > 0 {
			s.cpuCores = cpu / w
		}
	}
	return s
}

// firstWith is the time of the first (or, !first, the last) point that
// holds a TTFT histogram.
func firstWith(pts []statePoint, first bool) int64 {
	for i := range pts {
		j := i
		if !first {
			j = len(pts) - 1 - i
		}
		if pts[j].ttft != nil {
			return pts[j].t
		}
	}
	return 0
}

// tokenSpan is when the first tokens of one phase's measured requests (or
// of its warm-ups) arrived, and how many there were: server_ttft_differs
// judges a run only when no other request's first token falls between the
// scrapes its histogram was read from.
type tokenSpan struct {
	phase  int
	warmup bool
	lo, hi int64
	n      int
}

// noteFirstToken records the first content chunk's arrival of a record.
func (t *TraceAcc) noteFirstToken(rec *trace.Record) {
	var at int64 = -1
	for i := range rec.Chunks {
		if c := &rec.Chunks[i]; c.Text != "" || c.Reasoning != "" {
			at = c.T
			break
		}
	}
	if at < 0 {
		return
	}
	for i := range t.firstTokens {
		if sp := &t.firstTokens[i]; sp.phase == rec.Phase && sp.warmup == rec.Warmup {
			sp.lo, sp.hi, sp.n = min(sp.lo, at), max(sp.hi, at), sp.n+1
			return
		}
	}
	t.firstTokens = append(t.firstTokens, tokenSpan{phase: rec.Phase, warmup: rec.Warmup, lo: at, hi: at, n: 1})
}

// ttftJudgeable says whether a run's server TTFT histogram is its own:
// read between a scrape at or before its first send and one at or after
// its last response end, with no other request of the trace (another
// phase, a warm-up) getting its first token in between, and counting at
// least half and at most twice the run's own first tokens (else it holds
// traffic the trace did not send).
func (r *run) ttftJudgeable(s *runState) bool {
	if math.IsNaN(s.srvTTFT) || !s.ttftBracketed {
		return false
	}
	own := 0
	for _, sp := range r.trace.firstTokens {
		if sp.phase == r.phase.Index && !sp.warmup {
			own = sp.n
			continue
		}
		if sp.hi > s.ttftFrom && sp.lo <= s.ttftTo {
			return false
		}
	}
	return own > 0 && s.srvTTFTCount >= float64(own)/2 && s.srvTTFTCount <= 2*float64(own)
}

// peakMean is the largest and the mean value of meaning m over points;
// NaN for both when none has it.
func peakMean(pts []statePoint, m servermetrics.Meaning) (peak, mean float64) {
	peak, sum, n := math.NaN(), 0.0, 0
	for i := range pts {
		v := pts[i].v[m]
		if math.IsNaN(v) {
			continue
		}
		if n == 0 || v > peak {
			peak = v
		}
		sum += v
		n++
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return peak, sum / float64(n)
}

// increase is how much counter m grew over points: the sum of the steps
// between consecutive readings, a step down being a restart of the server
// (the counter began again from 0, so the new reading is all growth).
func increase(pts []statePoint, m servermetrics.Meaning) (float64, bool) {
	prev, total, n := 0.0, 0.0, 0
	for i := range pts {
		v := pts[i].v[m]
		if math.IsNaN(v) {
			continue
		}
		if n > 0 {
			if v >= prev {
				total += v - prev
			} else {
				total += v
			}
		}
		prev = v
		n++
	}
	if n < 2 {
		return math.NaN(), false
	}
	return total, true
}

// histIncrease is what a cumulative histogram counted between the first
// and the last point that has one: bucket by bucket, later minus earlier.
// A bucket that went down means the server restarted: the later counts
// are then all new. nil with fewer than two readings.
func histIncrease(pts []statePoint) []servermetrics.Bucket {
	var first, last []servermetrics.Bucket
	for i := range pts {
		if pts[i].ttft != nil {
			if first == nil {
				first = pts[i].ttft
			} else {
				last = pts[i].ttft
			}
		}
	}
	if first == nil || last == nil {
		return nil
	}
	before := map[float64]float64{}
	for _, b := range first {
		before[b.LE] = b.Count
	}
	out := make([]servermetrics.Bucket, len(last))
	restarted := false
	for i, b := range last {
		out[i] = servermetrics.Bucket{LE: b.LE, Count: b.Count - before[b.LE]}
		if out[i].Count < 0 {
			restarted = true
		}
	}
	if restarted {
		copy(out, last)
	}
	return out
}

func stateValue(v float64) (float64, bool) { return v, !math.IsNaN(v) }

// stateMetrics are the server-state metrics (docs/METRICS.md).
var stateMetrics = []*Metric{
	{
		Name: "server_running_peak", Unit: "requests", Scope: PerRun,
		Doc: "the most requests the server said it was running (holding a slot) in any scrape of its /metrics taken during the run (first send to last response end): vLLM num_requests_running, SGLang num_running_reqs, llama.cpp requests_processing, TGI batch_current_size",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().runningPeak) },
	},
	{
		Name: "server_running_avg", Unit: "requests", Scope: PerRun,
		Doc: "requests running on the server, mean over the scrapes taken during the run (scrapes are evenly spaced, so this is the time average)",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().runningAvg) },
	},
	{
		Name: "server_waiting_peak", Unit: "requests", Scope: PerRun,
		Doc: "the most requests the server said were queued for a slot in any scrape during the run: vLLM num_requests_waiting, SGLang num_queue_reqs, llama.cpp requests_deferred, TGI queue_size",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().waitingPeak) },
	},
	{
		Name: "server_waiting_avg", Unit: "requests", Scope: PerRun,
		Doc: "requests queued on the server, mean over the scrapes taken during the run",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().waitingAvg) },
	},
	{
		Name: "server_kv_usage_peak", Unit: "fraction", Scope: PerRun,
		Doc: "the fullest the server said its KV cache was (0–1) in any scrape during the run: vLLM kv_cache_usage_perc (older gpu_cache_usage_perc), SGLang token_usage, llama.cpp kv_cache_usage_ratio; several series: the largest",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().kvPeak) },
	},
	{
		Name: "server_kv_usage_avg", Unit: "fraction", Scope: PerRun,
		Doc: "KV-cache usage (0–1), mean over the scrapes taken during the run",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().kvAvg) },
	},
	{
		Name: "server_ttft_p50", Unit: "ms", Scope: PerRun,
		Doc: "the server's own median TTFT over the run: from its TTFT histogram (vLLM and SGLang time_to_first_token_seconds, the simulator's), the increase of each bucket over the run read as server_preemptions is, and the median interpolated within its bucket as Prometheus's histogram_quantile does; it counts from the request reaching the engine, so the client's ttft is normally a little above it",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().srvTTFT) },
	},
	{
		Name: "server_preemptions", Unit: "requests", Scope: PerRun,
		Doc: "requests the server preempted during the run: the increase of vLLM num_preemptions_total from the last scrape at or before the run's first send to the first at or after its last response end (a drop counts as a restart from 0)",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().preemptions) },
	},
	{
		Name: "server_prefix_hit_rate", Unit: "fraction", Scope: PerRun, HigherIsBetter: true,
		Doc: "prompt tokens the server found in its prefix cache / prompt tokens it looked up, over the run (increases of vLLM prefix_cache_hits_total and prefix_cache_queries_total, read as server_preemptions is); engines with a rate gauge instead (SGLang cache_hit_rate): its mean over the run's scrapes",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().prefixHitRate) },
	},
}

// processMetrics are --watch-pid's (docs/METRICS.md, "Server state").
var processMetrics = []*Metric{
	{
		Name: "process_rss_peak", Unit: "MB", Scope: PerRun,
		Doc: "the most resident memory the watched server process and its descendants held in any sample taken during the run (--watch-pid; Linux /proc RSS summed over the process tree, so pages they share count more than once), in MB (10⁶ bytes)",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().rssPeak / 1e6) },
	},
	{
		Name: "process_cpu_cores", Unit: "cores", Scope: PerRun,
		Doc: "CPU the watched process tree used over the run, in cores: increase of its user + system CPU seconds / the seconds between the samples read (as server_preemptions reads a counter)",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().cpuCores) },
	},
	{
		Name: "gpu_memory_peak", Unit: "MB", Scope: PerRun,
		Doc: "the most GPU memory in use, summed over the machine's GPUs (nvidia-smi memory.used, every GPU's, not only the server's), in any sample taken during the run, in MB (10⁶ bytes); --watch-pid on a machine with nvidia-smi",
		run: func(r *run, _ *DefinitionSet) (float64, bool) { return stateValue(r.serverState().gpuPeak / 1e6) },
	},
}

// Server-state warnings.
const (
	WarnQueueing    = "queueing"
	WarnPreempted   = "preempted"
	WarnKVCacheFull = "kv_cache_full"
	WarnServerTTFT  = "server_ttft_differs"
)

// TTFT agreement. The server's histogram only says which bucket its median
// falls in, so the client's median is compared with that bucket's bounds:
// above the upper bound by more than ttftSlackMs or ttftSlackShare of it
// (a round trip over a WAN and a serving layer's own tokenizing and
// framing fit in either), or below the lower bound by more than
// ttftBelowMs (a client cannot see a first token the engine has not yet
// made; the margin is for the two clocks' granularity). Judged only when
// the histogram counted at least half as many first tokens as the run has
// successful requests (else it is someone else's traffic).
const (
	ttftSlackMs    = 50.0
	ttftSlackShare = 0.25
	ttftBelowMs    = 5.0
)

// kvFullAt is the KV-cache usage from which a group warns. Engines
// allocate the cache in blocks (16 tokens in vLLM) and start preempting or
// deferring when no block is free, which they report as 1.0; 0.98 leaves
// room for the last partly used blocks.
const kvFullAt = 0.98

// countText writes a count of requests as a count: 2, not 2.00.
func countText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// stateWarnings checks what the server said about itself during a group's
// runs.
func stateWarnings(g *Group) []Warning {
	var out []Warning
	wait, run := g.Values["server_waiting_peak_max"], g.Values["server_running_peak_max"]
	if c, ok := g.Keys[KeyConcurrency].(int); ok && c > 0 && wait.Valid() && wait.Value > 0 {
		msg := fmt.Sprintf("at concurrency %d the server queued requests (up to %s waiting for a slot)", c, countText(wait.Value))
		ev := map[string]any{"concurrency": c, "waiting_peak": wait.Value}
		if run.Valid() && run.Value > 0 {
			msg += fmt.Sprintf(" while running at most %s: it looks like %s slots, and TTFT here includes time in the queue", countText(run.Value), countText(run.Value))
			ev["running_peak"] = run.Value
			ev["slots"] = run.Value
		}
		out = append(out, Warning{Code: WarnQueueing, Keys: g.Keys, Message: msg, Evidence: ev})
	}
	if p := g.Values["server_preemptions_max"]; p.Valid() && p.Value > 0 {
		out = append(out, Warning{Code: WarnPreempted, Keys: g.Keys,
			Message:  fmt.Sprintf("the server preempted %s requests during a run (evicted them to make room and recomputed them later): latency here includes recomputation", countText(p.Value)),
			Evidence: map[string]any{"preemptions_max": p.Value, "runs": p.N}})
	}
	if w, ok := ttftWarning(g); ok {
		out = append(out, w)
	}
	if kv := g.Values["server_kv_usage_peak_max"]; kv.Valid() && kv.Value >= kvFullAt {
		out = append(out, Warning{Code: WarnKVCacheFull, Keys: g.Keys,
			Message:  fmt.Sprintf("the server's KV cache was full (%.0f%% used at its peak): requests beyond it wait or are preempted, so this concurrency measures the cache size, not the engine's speed", kv.Value*100),
			Evidence: map[string]any{"kv_usage_peak": kv.Value, "threshold": kvFullAt}})
	}
	return out
}

// ttftWarning compares, run by run, the client's median TTFT with the
// bucket of the server's own median.
func ttftWarning(g *Group) (Warning, bool) {
	ti := metricIndex["ttft"]
	var n, judged int
	var ex map[string]any
	for _, r := range g.runs {
		s := r.serverState()
		if !r.ttftJudgeable(s) || r.dists[ti].N() == 0 {
			continue
		}
		judged++
		client := r.dists[ti].Quantile(0.5)
		above := client > s.srvTTFTHi+max(ttftSlackMs, ttftSlackShare*s.srvTTFTHi)
		below := client < s.srvTTFTLo-ttftBelowMs
		if !above && !below {
			continue
		}
		n++
		if ex == nil {
			ex = map[string]any{"client_ttft_p50_ms": client, "server_ttft_p50_ms": s.srvTTFT, "server_bucket_lo_ms": s.srvTTFTLo,
				"server_bucket_hi_ms": s.srvTTFTHi, "server_first_tokens": s.srvTTFTCount, "client_above": above}
		}
	}
	if n == 0 {
		return Warning{}, false
	}
	ex["runs_differing"], ex["runs_judged"] = n, judged
	var msg string
	if ex["client_above"].(bool) {
		msg = fmt.Sprintf("clients waited %s ms for the first token (median) while the server's own TTFT histogram puts its median at %s ms (between %s and %s): the time between the engine and the client (network, HTTP, tokenizing, the serving layer's queue) is a large part of TTFT here",
			FormatNum(ex["client_ttft_p50_ms"].(float64), false), FormatNum(ex["server_ttft_p50_ms"].(float64), false), FormatNum(ex["server_bucket_lo_ms"].(float64), false), FormatNum(ex["server_bucket_hi_ms"].(float64), false))
	} else {
		msg = fmt.Sprintf("clients saw the first token after %s ms (median), sooner than the server's own TTFT histogram allows (its median between %s and %s ms): its timer counts something clients do not wait for, or is wrong",
			FormatNum(ex["client_ttft_p50_ms"].(float64), false), FormatNum(ex["server_bucket_lo_ms"].(float64), false), FormatNum(ex["server_bucket_hi_ms"].(float64), false))
	}
	return Warning{Code: WarnServerTTFT, Keys: g.Keys, Message: msg, Evidence: ex}, true
}

// simTimeScaleMetric is the simulator's gauge of its time scale
// (sim.TimeScaleMetric; analyze does not import sim).
const simTimeScaleMetric = "llmreplay_sim_time_scale"

var profileLabel = regexp.MustCompile(`(?:^|,)profile="((?:[^"\\]|\\.)*)"`)

// scrapedTimeScale reads the time scale a separately started simulator
// reported on its /metrics, for a trace whose header cannot say it (a
// replay against `llmreplay sim --time-scale 0.1`): the numbers are then
// the profile's scaled, and analyze says so as for a capacity search's.
// A value outside (0, 1000] or of 1 says nothing.
func (t *TraceAcc) scrapedTimeScale(s *trace.Scrape) {
	if t.info.SimTimeScale != 0 || s.Source != trace.SourceMetrics {
		return
	}
	for _, smp := range s.Samples {
		if smp.Name != simTimeScaleMetric {
			continue
		}
		if v := smp.Value; v > 0 && v <= 1000 && v != 1 {
			t.info.SimTimeScale, t.info.Simulated = v, true
			if m := profileLabel.FindStringSubmatch(smp.Labels); m != nil && t.info.SimProfile == "" {
				t.info.SimProfile = safetext.Cut(m[1], safetext.MaxName)
			}
		}
		return
	}
}
