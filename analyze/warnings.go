package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Warning codes. Each says why a number in the table may not mean what it
// seems to; docs/METRICS.md lists the thresholds.
const (
	WarnNotStreamed      = "not_streamed"
	WarnUsageMismatch    = "usage_mismatch"
	WarnPromptNotExact   = "prompt_not_exact"
	WarnUsageImplausible = "usage_implausible"
	WarnImplausible      = "implausible_speed"
	WarnStoppedEarly     = "stopped_early"
	WarnDidNotCount      = "did_not_count"
	WarnErrorsClustered  = "errors_clustered"
	WarnSlowingDown      = "slowing_down"
	WarnClientBehind     = "client_behind"
	WarnMixedHeaders     = "mixed_headers"
	WarnTruncated        = "truncated"
	WarnNoTokenizer      = "tokenizer_unavailable"
	WarnShardsMissing    = "shards_missing"
	WarnClockAlignment   = "clock_alignment"
	WarnDuplicateTrace   = "duplicate_trace"
	WarnPartial          = "partial_trace"
	// WarnPrefillSuperlinear: TTFT grows clearly faster than the input
	// length (scaling.go has the fit and its thresholds).
	WarnPrefillSuperlinear = "prefill_superlinear"
	WarnClipped            = "clipped_text"
	WarnLateFinish         = "after_finish"
	WarnSaltedCacheHit     = "cache_hit_on_salted"
	WarnNoHitOnRepeat      = "no_cache_hit_on_repeat"
	// WarnTimeScaled: the simulator ran at a time scale, so every time
	// and speed of the trace is the profile's scaled (TraceInfo.SimTimeScale).
	WarnTimeScaled = "time_scaled"
)

// Thresholds of the trust warnings.
const (
	// A response is not streamed when its last chunk carries more than
	// this share of its tokens, or when its content chunks arrived bunched
	// together: the tokens after the first chunk came faster than
	// maxPlausibleTPS (a server that buffers and flushes everything at the
	// end). It is judged on the arrival pattern, not on TTFT's share of
	// E2E: a long prompt's prefill makes TTFT most of a streamed response.
	notStreamedLastShare = 0.5
	notStreamedMinTokens = 4
	// Server and tokenizer counts may differ by this share before we say so.
	usageTolerance = 0.02
	// … and by more than this many tokens: a count of the received text
	// misses, by design, what the server generated and never sent as text:
	// the end-of-sequence token (which vLLM counts in completion_tokens)
	// and the two reasoning delimiters a reasoning parser strips (<think>,
	// </think>). The same three tokens are the slack of the at-most-one-
	// token-per-byte bound.
	usageAllowance = 3
	// A server's count of a prompt may exceed the workload's by the special
	// tokens a tokenizer adds to any text it is asked to count (BOS, and
	// the EOS or separator some add): replay asks without them where the
	// API has a switch (llama.cpp, vLLM, SGLang) but TGI has none. The
	// chat template's tokens are never in it: replay asks for the prompt
	// text alone, not the templated conversation.
	promptAllowance = 2
	// No real engine streams one request faster than this.
	maxPlausibleTPS = 20000.0
	// Nor carries a stream's bytes faster than 10 Gbit/s.
	maxPlausibleBytesPerSec = 1.25e9
	// A response is "not counting" below this share of valid bytes.
	countUpMinShare = 0.9
	// Client lateness p99 above this means it fell behind its schedule.
	latenessP99Ms = 1.0
	// A burst ("release N together") is late only when its send spread is
	// also a noticeable share of what it measures: N sends from one client
	// take N times a send's CPU, which on a small machine is a millisecond
	// or more for 16–32 streams, while the TTFTs it shifts are hundreds.
	burstLatenessShare = 0.05
	// Errors cluster when some key value fails at least clusterFailing of
	// its requests while another fails at most clusterClean.
	clusterFailing = 0.5
	clusterClean   = 0.05
	// Repeats slow down when the median of the second half of the repeats
	// is below slowdownRatio of the first half's.
	slowdownRatio = 0.8
)

// Warning is one trust problem with the evidence behind it.
type Warning struct {
	Code     string         `json:"code"`
	Keys     map[string]any `json:"keys"`
	Message  string         `json:"message"`
	Evidence map[string]any `json:"evidence"`
}

// runWarn counts, per run, the requests each per-request check flags.
type runWarn struct {
	notStreamed                    int
	notStreamedEx                  string
	notStreamedShare, notStreamedR float64 // max last-chunk share, max arrival tok/s

	mismatch                    int
	badUsage                    int
	badUsageEx                  string
	mismatchEx                  string
	mismatchServer, mismatchTok int
	mismatchLo, mismatchHi      int // the bounds of the example, when judged by bounds
	mismatchJudge               string
	mismatchBy                  map[string]int // mismatching requests by judgement
	mismatchMax                 float64

	promptOff           int
	promptChecked       int
	promptEx            string
	promptWl, promptSrv int
	promptMax           float64

	implausible    int
	implausibleEx  string
	implausibleTPS float64
	implausibleBps float64

	stopped       int
	stoppedEx     string
	stoppedMin    int
	stoppedFinish map[string]int

	countChecked, notCounting int
	notCountingEx             string
	validBytes, totalBytes    int64

	// The first and the latest trendWindow per-stream speeds in completion
	// order, to see a server slowing down within one long run.
	head []float64
	tail [trendWindow]float64
	seen int
}

// trendWindow is how many requests at each end of a run the within-run
// slow-down check compares; trendMin is the fewest requests it needs.
const (
	trendWindow = 32
	trendMin    = 12
)

func (w *runWarn) observeSpeed(v float64) {
	if len(w.head) < trendWindow {
		w.head = append(w.head, v)
	}
	w.tail[w.seen%trendWindow] = v
	w.seen++
}

// trend compares the first and the last third (at most trendWindow
// requests each) of a run's per-stream speeds in completion order.
func (w *runWarn) trend() (first, last float64, p float64, ok bool) {
	if w.seen < trendMin {
		return 0, 0, 1, false
	}
	m := min(w.seen/3, trendWindow)
	head := append([]float64(nil), w.head[:m]...)
	tail := make([]float64, 0, m)
	for i := w.seen - m; i < w.seen; i++ {
		tail = append(tail, w.tail[i%trendWindow])
	}
	var a, b Dist
	for i := range head {
		a.Add(head[i])
		b.Add(tail[i])
	}
	return a.Quantile(0.5), b.Quantile(0.5), MannWhitneyP(head, tail), true
}

func (w *runWarn) observe(f *facts, rec *trace.Record, t *TraceAcc, primary bool) {
	if f.tokens >= notStreamedMinTokens {
		rate, bunched := f.arrivalRate()
		if f.lastShare > notStreamedLastShare || bunched {
			if w.notStreamed == 0 {
				w.notStreamedEx = rec.ID
			}
			w.notStreamed++
			w.notStreamedShare = math.Max(w.notStreamedShare, f.lastShare)
			w.notStreamedR = math.Max(w.notStreamedR, rate)
		}
	}
	if f.implausibleUsage {
		if w.badUsage == 0 {
			w.badUsageEx = rec.ID
		}
		w.badUsage++
	}
	if u := judgeUsage(f, rec, t.counter); u.judgement != "" {
		if primary {
			t.info.UsageChecks[u.judgement]++
		}
		if u.mismatch {
			if w.mismatch == 0 {
				w.mismatchEx, w.mismatchServer, w.mismatchTok = rec.ID, f.serverTokens, u.ref
				w.mismatchLo, w.mismatchHi, w.mismatchJudge = u.lo, u.hi, u.judgement
				w.mismatchBy = map[string]int{}
			}
			w.mismatch++
			w.mismatchBy[u.judgement]++
			w.mismatchMax = math.Max(w.mismatchMax, u.diff)
		}
	}
	if f.serverPrompt > 0 && rec.InputTokens > 0 {
		w.promptChecked++
		if d := f.serverPrompt - rec.InputTokens; d > promptAllowance || d < -promptAllowance {
			if w.promptOff == 0 {
				w.promptEx, w.promptWl, w.promptSrv = rec.ID, rec.InputTokens, f.serverPrompt
			}
			w.promptOff++
			w.promptMax = math.Max(w.promptMax, math.Abs(float64(d))/float64(max(f.serverPrompt, rec.InputTokens)))
		}
	}
	tps := 0.0
	if f.tokens >= 2 && f.last > f.first {
		tps = float64(f.tokens-1) / (float64(f.last-f.first) / 1e9)
	}
	bps := 0.0
	if f.content >= 2 && f.last > f.first {
		bps = float64(f.bytes) / (float64(f.last-f.first) / 1e9)
	}
	if tps > maxPlausibleTPS || bps > maxPlausibleBytesPerSec {
		if w.implausible == 0 {
			w.implausibleEx = rec.ID
		}
		w.implausible++
		w.implausibleTPS = math.Max(w.implausibleTPS, tps)
		w.implausibleBps = math.Max(w.implausibleBps, bps)
	}
	if rec.MaxTokens > 0 && f.tokens < rec.MaxTokens {
		if w.stopped == 0 || f.tokens < w.stoppedMin {
			w.stoppedMin = f.tokens
		}
		if w.stopped == 0 {
			w.stoppedEx = rec.ID
			w.stoppedFinish = map[string]int{}
		}
		w.stopped++
		w.stoppedFinish[rec.FinishReason]++
	}
	if t.header.Reference != "" {
		w.countChecked++
		valid := countUpValid(f.text, t.header.Reference)
		total := len(f.text)
		w.validBytes += int64(valid)
		w.totalBytes += int64(total)
		share := 0.0
		if total > 0 {
			share = float64(valid) / float64(total)
		}
		if share < countUpMinShare && f.tokens > 0 {
			if w.notCounting == 0 {
				w.notCountingEx = rec.ID
			}
			w.notCounting++
		}
	}
}

// runWarnings turns one run's counters into warnings keyed by the run.
func runWarnings(r *run) []Warning {
	w := &r.warn
	keys := runKeys(r)
	var out []Warning
	add := func(code, msg string, ev map[string]any) {
		out = append(out, Warning{Code: code, Keys: keys, Message: msg, Evidence: ev})
	}
	if w.notStreamed > 0 {
		add(WarnNotStreamed, "responses arrived in one piece, not as a stream: TTFT and per-stream speed mean nothing here",
			map[string]any{"n_requests": w.notStreamed, "of_requests": r.ok, "example": w.notStreamedEx,
				"max_last_chunk_share": round3(w.notStreamedShare), "max_arrival_tps": math.Round(w.notStreamedR)})
	}
	if w.mismatch > 0 {
		ev := map[string]any{"n_requests": w.mismatch, "of_requests": r.ok, "example": w.mismatchEx,
			"example_server_tokens": w.mismatchServer, "max_relative_difference": round3(w.mismatchMax),
			"judgement": w.mismatchJudge, "judgements": w.mismatchBy, "tokenizer": r.trace.info.Tokenizer}
		if w.mismatchJudge == JudgeBounds {
			ev["example_min_tokens"], ev["example_max_tokens"] = w.mismatchLo, w.mismatchHi
		} else {
			ev["example_text_tokens"] = w.mismatchTok
		}
		add(WarnUsageMismatch, usageMessage(w.mismatchJudge, r.trace.info.Tokenizer), ev)
	}
	if w.promptOff > 0 {
		add(WarnPromptNotExact, fmt.Sprintf("the server's own tokenizer counts the prompts differently from the workload's (%s: %d tokens in the workload, %d by the server's /tokenize): input lengths here are the workload tokenizer's, not the model's; build the workload with the model's tokenizer.json for exact prompts",
			w.promptEx, w.promptWl, w.promptSrv),
			map[string]any{"n_requests": w.promptOff, "of_requests": w.promptChecked, "example": w.promptEx,
				"example_workload_tokens": w.promptWl, "example_server_tokens": w.promptSrv,
				"max_relative_difference": round3(w.promptMax), "allowance_tokens": promptAllowance})
	}
	if w.badUsage > 0 {
		add(WarnUsageImplausible, "the server sent token counts that are negative or beyond any plausible bound: they are kept in the trace but not used, the text is counted instead",
			map[string]any{"n_requests": w.badUsage, "of_requests": r.ok, "example": w.badUsageEx})
	}
	if w.implausible > 0 {
		add(WarnImplausible, fmt.Sprintf("a stream ran faster than any real engine (> %.0f tok/s) or than the network could carry (> 10 Gbit/s)", maxPlausibleTPS),
			map[string]any{"n_requests": w.implausible, "of_requests": r.ok, "example": w.implausibleEx,
				"max_tokens_per_s": round3(w.implausibleTPS), "max_bytes_per_s": round3(w.implausibleBps)})
	}
	if w.stopped > 0 {
		add(WarnStoppedEarly, "responses stopped before max_tokens: their per-stream speed is not comparable",
			map[string]any{"n_requests": w.stopped, "of_requests": r.ok, "example": w.stoppedEx,
				"min_tokens": w.stoppedMin, "max_tokens": r.phase.MaxTokens, "finish_reasons": w.stoppedFinish})
	}
	if w.notCounting > 0 {
		share := 0.0
		if w.totalBytes > 0 {
			share = float64(w.validBytes) / float64(w.totalBytes)
		}
		add(WarnDidNotCount, "the model did not do the task (the text is not a count-up from 1): the speed is of output nobody asked for",
			map[string]any{"n_requests": w.notCounting, "of_requests": w.countChecked, "example": w.notCountingEx,
				"valid_output_share": round3(share)})
	}
	if first, last, p, ok := w.trend(); ok && last < slowdownRatio*first && p < Alpha {
		add(WarnSlowingDown, fmt.Sprintf("per-stream speed fell during the run (%.1f → %.1f tok/s, first vs last requests): the server degrades as it runs", first, last),
			map[string]any{"first_median_tps": round3(first), "last_median_tps": round3(last), "p_value": round3(p), "n_requests": w.seen})
	}
	// When nothing succeeded there is no measurement the schedule could
	// have distorted; the cell says "all N failed" instead.
	if lat := &r.dists[metricIndex["lateness"]]; lat.N() > 0 && r.ok > 0 {
		limit, why := latenessP99Ms, "send lateness p99 above 1 ms"
		if ttft := &r.dists[metricIndex["ttft"]]; r.phase.Kind == "burst" && ttft.N() > 0 {
			if l := burstLatenessShare * ttft.Quantile(0.5); l > limit {
				limit, why = l, fmt.Sprintf("burst send spread p99 above 5%% of its TTFT p50 (%.3g ms)", l)
			}
		}
		if p := lat.Quantile(0.99); p > limit {
			add(WarnClientBehind, "the client fell behind its schedule ("+why+"): the load was lighter than planned",
				map[string]any{"lateness_p99_ms": round3(p), "lateness_max_ms": round3(lat.Max()), "limit_ms": round3(limit), "n_requests": lat.N()})
		}
	}
	return out
}

func runKeys(r *run) map[string]any {
	k := map[string]any{
		KeyLabel: r.trace.info.Label, KeyPhase: r.phase.Name, KeyConcurrency: r.phase.Concurrency,
		KeyInputTokens: r.phase.InputTokens, KeyRepeat: r.phase.Repeat,
	}
	if r.turn > 0 {
		k[KeyTurn] = r.turn
	}
	return k
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// groupWarnings merges the run warnings of g by code and adds the
// group-level checks.
func groupWarnings(res *Result, g *Group) []Warning {
	byCode := map[string]*Warning{}
	var order []string
	for _, r := range g.runs {
		for _, w := range runWarnings(r) {
			m, ok := byCode[w.Code]
			if !ok {
				cp := Warning{Code: w.Code, Keys: g.Keys, Message: w.Message, Evidence: map[string]any{"runs": 0}}
				for k, v := range w.Evidence {
					cp.Evidence[k] = v
				}
				byCode[w.Code] = &cp
				order = append(order, w.Code)
				m = &cp
			} else {
				mergeEvidence(m.Evidence, w.Evidence)
			}
			m.Evidence["runs"] = m.Evidence["runs"].(int) + 1
		}
	}
	var out []Warning
	for _, c := range order {
		out = append(out, *byCode[c])
	}
	// One cell mixing traces whose headers differ compares unlike things
	// (benchstat's "residue").
	digests, models := map[string]bool{}, map[string]bool{}
	for _, r := range g.runs {
		digests[r.trace.info.WorkloadDigest] = true
		models[r.trace.info.Model] = true
	}
	if len(digests) > 1 || len(models) > 1 {
		out = append(out, Warning{Code: WarnMixedHeaders, Keys: g.Keys,
			Message:  "this cell mixes traces with different workloads or models; label them apart (name=path) to compare them",
			Evidence: map[string]any{"workload_digests": sortedKeys(digests), "models": sortedKeys(models)}})
	}
	out = append(out, serverWarnings(g)...)
	out = append(out, stateWarnings(g)...)
	for _, w := range res.Warnings {
		if w.Code == WarnSlowingDown && keysWithin(w.Keys, g.Keys) {
			out = append(out, w)
		}
	}
	return out
}

// keysWithin reports whether a warning keyed by wk concerns a group keyed
// by gk: every key both have agrees.
func keysWithin(wk, gk map[string]any) bool {
	for k, v := range gk {
		if wv, ok := wk[k]; ok && fmt.Sprint(wv) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func mergeEvidence(dst, src map[string]any) {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		switch {
		case strings.HasPrefix(k, "n_") || strings.HasPrefix(k, "of_"):
			dst[k] = toF(old) + toF(v)
		case strings.HasPrefix(k, "max_"):
			dst[k] = math.Max(toF(old), toF(v))
		case strings.HasPrefix(k, "min_"):
			dst[k] = math.Min(toF(old), toF(v))
		case k == "finish_reasons" || k == "judgements":
			a, b := old.(map[string]int), v.(map[string]int)
			c := map[string]int{}
			for x, n := range a {
				c[x] += n
			}
			for x, n := range b {
				c[x] += n
			}
			dst[k] = c
		}
	}
}

func toF(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// traceWarnings are the checks that need a whole trace.
func traceWarnings(a *Analyzer, res *Result) []Warning {
	var out []Warning
	for _, d := range a.dups {
		out = append(out, Warning{Code: WarnDuplicateTrace, Keys: map[string]any{KeyLabel: d.label},
			Message:  fmt.Sprintf("%s is the same run as %s (same start time, salt seed and workload): counted once, so it adds no evidence", d.path, d.first),
			Evidence: map[string]any{"path": d.path, "same_run_as": d.first}})
	}
	for _, t := range a.traces {
		lk := map[string]any{KeyLabel: t.info.Label}
		if note := t.info.TimeScaleNote(); note != "" {
			out = append(out, Warning{Code: WarnTimeScaled, Keys: lk, Message: note,
				Evidence: map[string]any{"time_scale": t.info.SimTimeScale, "profile": t.info.SimProfile}})
		}
		if planned, msg := t.partial(); msg != "" && (msg != "the trace ends in a cut-off tail") {
			out = append(out, Warning{Code: WarnPartial, Keys: lk,
				Message:  msg + "; claims over it are at most inconclusive unless check --accept-partial",
				Evidence: map[string]any{"path": t.info.Path, "planned": planned}})
		}
		if t.info.Truncated {
			out = append(out, Warning{Code: WarnTruncated, Keys: lk,
				Message:  "the trace ends in a cut-off tail (the run crashed or is still running); the last requests are missing",
				Evidence: map[string]any{"path": t.info.Path, "records": t.info.Records}})
		}
		if t.info.Clipped > 0 {
			out = append(out, Warning{Code: WarnClipped, Keys: lk,
				Message: fmt.Sprintf("%d %s longer than a trace keeps: %d bytes of text are not stored; their output tokens come from the server's usage where it sent one, else from the text kept, which undercounts them",
					t.info.Clipped, plural(t.info.Clipped, "response was", "responses were"), t.info.ClippedBytes),
				Evidence: map[string]any{"responses": t.info.Clipped, "bytes": t.info.ClippedBytes}})
		}
		if t.info.SaltedHits > 0 {
			out = append(out, Warning{Code: WarnSaltedCacheHit, Keys: lk,
				Message: fmt.Sprintf("the server said it served more than half of %d salted prompts from its cache (%s): every salted prompt starts with words new to this run, so either its count is wrong or it caches more than prefixes; its TTFTs are not those of cold prompts",
					t.info.SaltedHits, t.info.SaltedHit),
				Evidence: map[string]any{"requests": t.info.SaltedHits, "first": t.info.SaltedHit}})
		}
		if t.info.RepeatCounted >= 2 && t.info.RepeatHits == 0 && t.header.Options["server_cache"] != "off" {
			// The first request of a shared prefix cannot hit; every later
			// one sends the same leading tokens verbatim (no salt).
			out = append(out, Warning{Code: WarnNoHitOnRepeat, Keys: lk,
				Message: fmt.Sprintf("a --prefix %s run sent the same leading tokens unsalted in %d requests whose server reports cached tokens, and it reported 0 for every one: its prefix cache is off or its count is wrong; these TTFTs are all cold",
					t.header.Options["prefix"], t.info.RepeatCounted),
				Evidence: map[string]any{"requests": t.info.RepeatCounted, "prefix": t.header.Options["prefix"]}})
		}
		if t.info.LateFinish > 0 {
			out = append(out, Warning{Code: WarnLateFinish, Keys: lk,
				Message: fmt.Sprintf("%d %s on after the finish signal (more finish reasons, or text): the first finish reason is the one counted, the rest are kept as notes (%s)",
					t.info.LateFinish, plural(t.info.LateFinish, "response went", "responses went"), t.info.LateNote),
				Evidence: map[string]any{"responses": t.info.LateFinish, "first": t.info.LateNote}})
		}
		if n := len(t.info.ShardsMissing); n > 0 {
			out = append(out, Warning{Code: WarnShardsMissing, Keys: lk,
				Message: fmt.Sprintf("merged without %d of its %d shards: counts, phases and aggregate tok/s cover only the shards that are here",
					n, t.info.Shards+n),
				Evidence: map[string]any{"missing": t.info.ShardsMissing, "merged": t.info.Shards}})
		}
		if t.info.ShardHosts > 1 {
			// Phase windows span machines: aggregate tok/s is as good as
			// the clocks. Say how good, beside the metrics it affects.
			msg := fmt.Sprintf("merged from %d shards on %d hosts: phase windows, and so aggregate tok/s, compare times across machines to within ±%v (per-request metrics use one clock each and are exact)",
				t.info.Shards, t.info.ShardHosts, time.Duration(t.info.ClockAlignErrorNs))
			if t.info.ClockAlignUnknown {
				msg = fmt.Sprintf("merged from %d shards on %d hosts whose clocks gave no error estimate: phase windows, and so aggregate tok/s, may be off by the clocks' disagreement (per-request metrics are exact)",
					t.info.Shards, t.info.ShardHosts)
			}
			out = append(out, Warning{Code: WarnClockAlignment, Keys: lk, Message: msg,
				Evidence: map[string]any{"hosts": t.info.ShardHosts, "align_error_ns": t.info.ClockAlignErrorNs, "unknown": t.info.ClockAlignUnknown}})
		}
		out = append(out, clockStepWarning(t, lk)...)
		out = append(out, clientLateWarnings(t, lk)...)
		if t.counter.fallback != "" {
			out = append(out, Warning{Code: WarnNoTokenizer, Keys: lk,
				Message:  "the trace's tokenizer could not be loaded: requests without server usage are counted one token per chunk, and usage is checked against the server's own tokenizer where the trace has its counts, else only against bounds; give its tokenizer.json (Options.Tokenizer; the --tokenizer flag of analyze and check) to fix",
				Evidence: map[string]any{"tokenizer": t.info.Tokenizer, "error": t.counter.fallback}})
		}
		var runs []*run
		for _, r := range res.runs {
			if r.trace == t {
				runs = append(runs, r)
			}
		}
		out = append(out, clusteredErrors(t, runs, KeyInputTokens)...)
		out = append(out, clusteredErrors(t, runs, KeyConcurrency)...)
		out = append(out, slowingDown(t, runs, &res.Definitions)...)
	}
	return out
}

// clusteredErrors finds failures concentrated at some values of one key (an
// HTTP 400 wall at one input length, refused connections from one
// concurrency up) while other values are clean.
func clusteredErrors(t *TraceAcc, runs []*run, key string) []Warning {
	type tally struct {
		value       int
		req, failed int
		classes     map[string]int
		examples    map[string]string
	}
	by := map[int]*tally{}
	for _, r := range runs {
		v := r.keyValue(key).(int)
		x, ok := by[v]
		if !ok {
			x = &tally{value: v, classes: map[string]int{}, examples: map[string]string{}}
			by[v] = x
		}
		x.req += r.ok + r.failed
		x.failed += r.failed
		for c, n := range r.failedBy {
			x.classes[string(c)] += n
		}
		for c, m := range r.failedEx {
			if _, ok := x.examples[string(c)]; !ok {
				x.examples[string(c)] = m
			}
		}
	}
	if len(by) < 2 {
		return nil
	}
	var failing, clean []int
	var rows []map[string]any
	for v, x := range by {
		if x.req == 0 {
			continue
		}
		rate := float64(x.failed) / float64(x.req)
		if rate >= clusterFailing && x.failed >= 1 {
			failing = append(failing, v)
		} else if rate <= clusterClean {
			clean = append(clean, v)
		}
	}
	if len(failing) == 0 || len(clean) == 0 {
		return nil
	}
	sort.Ints(failing)
	sort.Ints(clean)
	vals := make([]int, 0, len(by))
	for v := range by {
		vals = append(vals, v)
	}
	sort.Ints(vals)
	for _, v := range vals {
		x := by[v]
		row := map[string]any{key: v, "requests": x.req, "failed": x.failed, "classes": x.classes}
		// The server's own explanation, when one class is most of the
		// failures at this value ("request (5000 tokens) exceeds the
		// available context size"): it names the limit better than a count.
		if c, _ := mainClass(x.classes); c != "" && 2*x.classes[c] > x.failed && serverSpoke(c) {
			row["message"] = x.examples[c]
		}
		rows = append(rows, row)
	}
	name := strings.ReplaceAll(key, "_", " ")
	return []Warning{{Code: WarnErrorsClustered, Keys: map[string]any{KeyLabel: t.info.Label},
		Message: fmt.Sprintf("failures cluster at %s %s while %s %s succeed: a limit of the server, not noise",
			name, joinInts(failing), name, joinInts(clean)),
		Evidence: map[string]any{"key": key, "failing": failing, "clean": clean, "by_value": rows}}}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// slowingDown compares repeats of the same concurrency and input length:
// a steady decline is a leak or a thermal limit, not a property of the
// configuration.
func slowingDown(t *TraceAcc, runs []*run, d *DefinitionSet) []Warning {
	// The rate is part of the configuration: a rate sweep's phases share
	// concurrency 0 and are not repeats of each other.
	type cfg struct {
		c, in int
		rate  float64
	}
	series := map[cfg][]*run{}
	var order []cfg
	for _, r := range runs {
		k := cfg{r.phase.Concurrency, r.phase.InputTokens, r.phase.Rate}
		if _, ok := series[k]; !ok {
			order = append(order, k)
		}
		series[k] = append(series[k], r)
	}
	idx := metricIndex["per_stream_tps"]
	var out []Warning
	for _, k := range order {
		rs := series[k]
		if len(rs) < 2 {
			continue
		}
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].phase.Repeat < rs[j].phase.Repeat })
		var med []float64
		for _, r := range rs {
			if r.dists[idx].N() == 0 {
				med = nil
				break
			}
			med = append(med, r.dists[idx].Quantile(0.5))
		}
		if len(med) < 2 || med[0] <= 0 {
			continue
		}
		// Halves, not endpoints: one slow last repeat (a noisy neighbour) is
		// not a trend, a second half slower than the first is.
		h := len(med) / 2
		var a, b Dist
		for i := 0; i < h; i++ {
			a.Add(med[i])
			b.Add(med[len(med)-h+i])
		}
		first, last := a.Quantile(0.5), b.Quantile(0.5)
		if last < slowdownRatio*first {
			rounded := make([]float64, len(med))
			for i, v := range med {
				rounded[i] = math.Round(v*10) / 10
			}
			keys := map[string]any{KeyLabel: t.info.Label, KeyConcurrency: k.c, KeyInputTokens: k.in}
			if k.rate > 0 {
				keys[KeyRate] = k.rate
			}
			out = append(out, Warning{Code: WarnSlowingDown,
				Keys: keys,
				Message: fmt.Sprintf("per-stream speed fell across repeats (median %.1f tok/s in the first half, %.1f in the second): the server degrades as it runs, so a median hides a trend",
					first, last),
				Evidence: map[string]any{"per_stream_tps_median_by_repeat": rounded}})
		}
	}
	return out
}

// AllWarnings lists the trace-level warnings and those of the given
// grouping, each once.
func AllWarnings(res *Result, by []string) []Warning {
	return NewDocument(res, by).Warnings
}

// Judgements of usage_mismatch: what a server's output token count is held
// against, best first (docs/METRICS.md).
const (
	// JudgeServerTokenizer: the server's own tokenizer's count of the
	// received text (its /tokenize, asked by replay).
	JudgeServerTokenizer = "server-tokenizer"
	// JudgeTokenizer: the analysis's count of the received text with a
	// tokenizer taken to be the model's (given, or a tokenizer.json).
	JudgeTokenizer = "tokenizer"
	// JudgeBounds: no count of the model's own; bounds any tokenizer
	// obeys: at least one token per content chunk, at most one per byte.
	JudgeBounds = "bounds"
	// JudgeStream: the stream itself backs the count: the server's
	// per-chunk counts add up to it, or it equals the content chunks,
	// one token per event. Such a count agrees with what arrived; a
	// re-tokenization of the text is no better a reference (a model emits
	// tokens its tokenizer would not produce from the text: llama.cpp's 64
	// one-token events whose text its own /tokenize counts as 70–75).
	JudgeStream = "stream"
)

// usageJudged is one response's usage check.
type usageJudged struct {
	judgement string // "" when not judged (no usage, no content)
	ref       int    // the count of the text it was held against (not for bounds)
	lo, hi    int    // the bounds (JudgeBounds)
	mismatch  bool
	diff      float64 // relative difference, or distance past the bound
}

// judgeUsage holds a response's server count against the best reference
// the trace allows: the server's own tokenizer, else a tokenizer that is
// the model's, else bounds that need no tokenizer. A foreign tokenizer's
// count is never the reference: a model whose one-token chunks are Thai
// words is several o200k tokens per chunk, and honest usage would look
// wrong at every request.
func judgeUsage(f *facts, rec *trace.Record, c *counter) usageJudged {
	if f.serverTokens < 0 || f.content == 0 {
		return usageJudged{}
	}
	s := f.serverTokens
	if s == f.chunkTokens || s == f.content {
		return usageJudged{judgement: JudgeStream, ref: s}
	}
	against := func(judgement string, k int) usageJudged {
		d := s - k
		if d < 0 {
			d = -d
		}
		diff := float64(d) / math.Max(1, float64(max(s, k)))
		return usageJudged{judgement: judgement, ref: k, diff: diff, mismatch: d > usageAllowance && diff > usageTolerance}
	}
	switch {
	case f.serverText > 0:
		return against(JudgeServerTokenizer, f.serverText)
	case c.model && c.tok != nil && rec.Clipped == 0:
		return against(JudgeTokenizer, f.tokenizerTokens)
	}
	lo := f.content
	hi := int(min(f.textBytes+usageAllowance, math.MaxInt32))
	u := usageJudged{judgement: JudgeBounds, lo: lo, hi: hi}
	switch {
	case s < lo:
		u.mismatch, u.diff = true, float64(lo-s)/float64(lo)
	case s > hi:
		u.mismatch, u.diff = true, float64(s-hi)/float64(s)
	}
	return u
}

// usageMessage says what a run's usage_mismatch was judged against.
func usageMessage(judgement, tokenizer string) string {
	switch judgement {
	case JudgeServerTokenizer:
		return fmt.Sprintf("the server's token count differs from its own tokenizer's count of the text it sent (its /tokenize) by more than %.0f%% and %d tokens: its usage is not the text it streamed", usageTolerance*100, usageAllowance)
	case JudgeTokenizer:
		return fmt.Sprintf("the server's token count differs from the model's tokenizer's (%s) count of the received text by more than %.0f%% and %d tokens", tokenizer, usageTolerance*100, usageAllowance)
	}
	return fmt.Sprintf("the server's token count is outside what the received text can hold, whatever the tokenizer: fewer tokens than the content chunks it streamed, or more than one per byte (+%d); without the server's /tokenize or the model's tokenizer.json only such bounds are checked", usageAllowance)
}
