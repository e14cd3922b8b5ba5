package analyze

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// SLO is the service-level objective goodput counts against; a zero bound
// is not checked.
type SLO struct {
	TTFT time.Duration `json:"ttft_ms"`
	TPOT time.Duration `json:"tpot_ms"`
	E2E  time.Duration `json:"e2e_ms"`
}

// DefaultSLO is the goodput bound when Options.SLO is zero; the CLI's
// --slo default is its String.
var DefaultSLO = SLO{TTFT: 2 * time.Second, TPOT: 50 * time.Millisecond}

// String writes the SLO the way ParseSLO reads it ("ttft=2s,tpot=50ms"),
// leaving out bounds that are not checked.
func (s SLO) String() string {
	var parts []string
	for _, b := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
		if b.d > 0 {
			parts = append(parts, b.name+"="+b.d.String())
		}
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads "ttft=2s,tpot=50ms[,e2e=10s]"; a bare number is
// milliseconds.
func ParseSLO(s string) (SLO, error) {
	var o SLO
	if strings.TrimSpace(s) == "" {
		return o, fielderr.New("analyze: Options", "SLO", "is empty", "give bounds like ttft=2s,tpot=50ms")
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return o, fielderr.New("analyze: Options", "SLO", fmt.Sprintf("%q has no name=duration", part), "write each bound as name=duration, e.g. ttft=2s")
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil {
				return o, fielderr.New("analyze: Options", "SLO", fmt.Sprintf("%s=%s is not a duration", k, v), "write e.g. 2s or 50ms")
			}
			d = time.Duration(f * float64(time.Millisecond))
		}
		if d <= 0 {
			return o, fielderr.New("analyze: Options", "SLO", fmt.Sprintf("%s=%s is not positive", k, v), "give a bound above 0")
		}
		switch strings.ToLower(k) {
		case "ttft":
			o.TTFT = d
		case "tpot":
			o.TPOT = d
		case "e2e":
			o.E2E = d
		default:
			return o, fielderr.New("analyze: Options", "SLO", fmt.Sprintf("has an unknown bound %q", k), "use ttft, tpot or e2e")
		}
	}
	return o, nil
}

// Options configure an Analyzer.
type Options struct {
	// Definitions names the definition set ("" = llmreplay).
	Definitions string
	// SLO bounds goodput; the zero value means DefaultSLO.
	SLO SLO
	// Tokenizer, when set, overrides every trace header's tokenizer.
	Tokenizer string
	// Records, when set, sees every record of every trace AnalyzeFiles
	// reads (warm-ups too), with the label it is analysed under: for
	// callers that draw what a table cannot (the report's timelines) in
	// the same single pass. The record is reused after the call.
	Records func(label string, h *trace.Header, rec *trace.Record)
	// Scrapes, when set, sees every scrape of the server's /metrics (or
	// of a watched process) the traces hold (1.3), likewise.
	Scrapes func(label string, sc *trace.Scrape)
}

// Analyzer accumulates any number of traces. It is not safe for concurrent
// use; analyse traces one after the other (each is a stream).
type Analyzer struct {
	defs     DefinitionSet
	slo      SLO
	tokOver  string
	counters map[string]*counter
	traces   []*TraceAcc
	runs     []*run
	f        facts
	// runIDs maps each run identity seen (runIdentity) to the path of the
	// trace that brought it; dups are the traces skipped as repeats.
	runIDs map[string]string
	dups   []duplicate
	// onRecord is Options.Records, onScrape Options.Scrapes.
	onRecord func(label string, h *trace.Header, rec *trace.Record)
	onScrape func(label string, sc *trace.Scrape)
}

// duplicate is a trace skipped because an earlier input was the same run.
type duplicate struct{ path, first, label string }

// runIdentity names one recorded run: the wall-clock start (ns precision)
// with the salt seed, the workload and the shard. Two files with the same
// identity are copies of one run (the same bytes, or a re-compressed or
// filtered copy); counting both would double the evidence from one run.
// "" when the header has no start time (nothing to compare).
func runIdentity(h trace.Header) string {
	if h.StartWall == "" {
		return ""
	}
	shard := -1
	if h.Shard != nil {
		shard = h.Shard.Index
	}
	return fmt.Sprintf("%s\x00%d\x00%s\x00%d", h.StartWall, h.SaltSeed, h.WorkloadDigest, shard)
}

// New returns an Analyzer.
func New(o Options) (*Analyzer, error) {
	d, err := LookupDefinitions(o.Definitions)
	if err != nil {
		return nil, err
	}
	slo := o.SLO
	if slo == (SLO{}) {
		slo = DefaultSLO
	}
	if o.Tokenizer != "" {
		// A tokenizer asked for by name must load: falling back to chunk
		// counts would answer a different question than the one asked.
		if _, err := tokenize.Load(o.Tokenizer); err != nil {
			return nil, fielderr.New("analyze: Options", "Tokenizer", fmt.Sprintf("%q cannot be loaded (%v)", o.Tokenizer, err), "give a tokenizer.json path or o200k_base / cl100k_base")
		}
	}
	return &Analyzer{defs: d, slo: slo, tokOver: o.Tokenizer, counters: map[string]*counter{}, onRecord: o.Records, onScrape: o.Scrapes}, nil
}

// TraceInfo describes one analysed trace.
type TraceInfo struct {
	Label string `json:"label"`
	// URL is the server's address as the trace records it (credentials
	// and query values removed), Started the run's wall-clock start, Host
	// the client machine ("linux/amd64, AMD EPYC, 2 cores"): the report's
	// headline.
	URL            string `json:"url,omitempty"`
	Started        string `json:"started,omitempty"`
	Host           string `json:"host,omitempty"`
	Path           string `json:"path,omitempty"`
	Model          string `json:"model"`
	API            string `json:"api"`
	WorkloadDigest string `json:"workload_digest"`
	Tokenizer      string `json:"tokenizer"`
	// TokenizerFile is the tokenizer.json that counted the text: the one
	// the trace recorded, or --tokenizer's; "" for a built-in encoding.
	TokenizerFile string `json:"tokenizer_file,omitempty"`
	Simulated     bool   `json:"simulated,omitempty"`
	SimProfile    string `json:"sim_profile,omitempty"`
	// SimTimeScale is the factor the simulator's every duration was run
	// at (a capacity search's --time-scale), 0 when the trace ran at the
	// profile's own pace or does not say.
	SimTimeScale float64 `json:"sim_time_scale,omitempty"`
	Records      int     `json:"records"`
	Warmup       int     `json:"warmup_skipped"`
	// NotSent counts the turns of sessions never sent because an earlier
	// turn failed (error class not-sent, trace 1.4): no request reached
	// the server, so they are neither ok nor failures in any measure.
	NotSent   int  `json:"not_sent,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
	// SentByCut is, for a trace cut short (1.6), how many measured
	// requests had been sent by its last flush, CutAt when that was (run
	// clock, ns); nil when the trace does not say (older formats, a whole
	// trace).
	SentByCut *int64 `json:"sent_by_cut,omitempty"`
	CutAt     int64  `json:"cut_at_ns,omitempty"`
	// Damaged says which entries of the file could not be read (skipped
	// between good ones, or the file unreadable past a point); "" when
	// every byte was read. The analysis uses every record that could be.
	Damaged      string         `json:"damaged,omitempty"`
	TokenSources map[string]int `json:"output_token_sources"`
	// UsageChecks counts the responses whose server token count was
	// judged (usage_mismatch), by what it was held against:
	// server-tokenizer, tokenizer or bounds.
	UsageChecks map[string]int `json:"usage_checks"`
	// Clipped counts the responses whose text the trace holds only in
	// part (Record.Clipped), and the bytes it does not hold.
	Clipped      int   `json:"clipped_responses,omitempty"`
	ClippedBytes int64 `json:"clipped_bytes,omitempty"`
	// LateFinish counts the responses that went on after their first
	// finish signal (more finish reasons, or text); LateNote is the first
	// one's note.
	LateFinish int    `json:"late_finish,omitempty"`
	LateNote   string `json:"late_note,omitempty"`
	// SaltedHits counts requests of a salted run (every prompt new to it)
	// whose server said it served more than half the prompt from its
	// cache; SaltedHit is the first one's ID and share.
	SaltedHits int    `json:"salted_cache_hits,omitempty"`
	SaltedHit  string `json:"salted_cache_hit,omitempty"`
	// RepeatCounted counts the successful requests of an unsalted
	// shared-prefix run (every prompt starts with the same tokens) whose
	// server reported a cached-token count; RepeatHits those whose count
	// was above 0.
	RepeatCounted int `json:"repeat_counted,omitempty"`
	RepeatHits    int `json:"repeat_hits,omitempty"`
	// Planned is Σ requests of the header's phases; Partial says in plain
	// words when fewer measured requests are in the trace ("" when whole).
	Planned int    `json:"planned_requests,omitempty"`
	Partial string `json:"partial,omitempty"`

	// Scrapes of the server's /metrics (and of a watched process) the
	// trace holds (1.3), how many failed and the first failure's reason,
	// and the engine whose metric names were recognised.
	Scrapes       int    `json:"server_scrapes,omitempty"`
	ScrapesFailed int    `json:"server_scrapes_failed,omitempty"`
	ScrapeError   string `json:"server_scrape_error,omitempty"`
	ServerEngine  string `json:"server_engine,omitempty"`

	// For a trace merged from shards (trace merge): how many shards, which
	// are missing, on how many hosts, and the worst-case error of their
	// common clock, which phase windows and so aggregate tok/s carry
	// (per-request metrics use one machine's clock each and carry none).
	Shards            int   `json:"shards,omitempty"`
	ShardsMissing     []int `json:"shards_missing,omitempty"`
	ShardHosts        int   `json:"shard_hosts,omitempty"`
	ClockAlignErrorNs int64 `json:"clock_align_error_ns,omitempty"`
	ClockAlignUnknown bool  `json:"clock_align_unknown,omitempty"`
	// ClockStepNs is the largest step of the wall clock against the run
	// clock between two clock readings, from ClockStepFrom to ClockStepTo
	// (run-clock ns); 0 when none (clockstep.go).
	ClockStepNs   int64 `json:"clock_step_ns,omitempty"`
	ClockStepFrom int64 `json:"clock_step_from_ns,omitempty"`
	ClockStepTo   int64 `json:"clock_step_to_ns,omitempty"`
}

// TraceAcc takes the records of one trace.
type TraceAcc struct {
	a       *Analyzer
	idx     int
	info    TraceInfo
	header  trace.Header
	counter *counter
	phases  map[int]*run
	// perPhase counts records (warm-up included) per phase index, to
	// compare with the header's planned requests.
	perPhase map[int]int
	// points are the successful scrapes in common terms, in time order
	// (serverstate.go).
	points []statePoint
	// clock are the client's clock readings (clockstep.go).
	clock clockReadings
	// firstTokens are when each phase's first tokens arrived
	// (serverstate.go, server_ttft_differs).
	firstTokens []tokenSpan
	// late tallies chunks read late and responses' ends (clientlate.go).
	late clientLate
}

// Trace starts a trace with the given label ("" = the header's label).
func (a *Analyzer) Trace(label, path string, h trace.Header) *TraceAcc {
	if label == "" {
		label = h.Label
	}
	if label == "" {
		label = fmt.Sprintf("trace%d", len(a.traces)+1)
	}
	// Shown in every table, warning and chart: a hand-made trace's
	// megabyte label or model id is cut (replay never writes one).
	label = safetext.Cut(label, safetext.MaxName)
	h.Model = safetext.Cut(h.Model, safetext.MaxName)
	name := h.Tokenizer
	if name == "" && a.tokOver == "" {
		name = DefaultTokenizer
	}
	spec := name
	if a.tokOver != "" {
		spec = a.tokOver
	}
	key := spec + "\x00" + h.TokenizerPath + "\x00" + h.TokenizerDigest
	c, ok := a.counters[key]
	if !ok {
		c = newCounter(name, h.TokenizerPath, h.TokenizerDigest, a.tokOver)
		a.counters[key] = c
	}
	t := &TraceAcc{
		a: a, idx: len(a.traces), header: h, counter: c, phases: map[int]*run{},
		info: TraceInfo{
			Label: label, Path: path, Model: h.Model, API: h.API, WorkloadDigest: h.WorkloadDigest,
			Tokenizer: spec, TokenizerFile: c.source, Simulated: h.Simulated, SimProfile: h.SimProfile,
			TokenSources: map[string]int{}, UsageChecks: map[string]int{},
			URL: h.URL, Started: h.StartWall, Host: hostLine(h.Host),
		},
	}
	t.info.SimTimeScale = simTimeScale(h)
	if n := len(h.Shards); n > 0 {
		hosts := map[string]bool{}
		for _, s := range h.Shards {
			hosts[s.Host] = true
		}
		t.info.Shards, t.info.ShardsMissing, t.info.ShardHosts = n, h.ShardsMissing, len(hosts)
		if len(hosts) > 1 {
			t.info.ClockAlignErrorNs, t.info.ClockAlignUnknown = trace.AlignmentError(h.Shards)
		}
	}
	a.traces = append(a.traces, t)
	return t
}

// partial compares the measured records with the requests the header's
// phases planned: a run stopped with Ctrl-C or killed holds fewer. A shard
// holds its share by design and a merge without shards has its own warning,
// so neither is judged here.
func (t *TraceAcc) partial() (planned int, msg string) {
	measured := 0
	for _, p := range t.header.Phases {
		planned += p.Requests
		measured += min(t.perPhase[p.Index], p.Requests)
	}
	if t.header.Shard != nil || len(t.header.ShardsMissing) > 0 || planned == 0 {
		return planned, ""
	}
	switch {
	case t.info.Damaged != "":
		return planned, fmt.Sprintf("damaged: %s; %d of %d requests could be read", t.info.Damaged, measured, planned)
	case measured < planned && t.info.Truncated && t.info.SentByCut != nil:
		// The last flush said how many were sent by then: those without a
		// record were in flight when the run died, not never sent.
		msg := trace.CutSummary(int64(measured), int64(t.info.Records-t.info.Warmup), int64(planned), *t.info.SentByCut, t.info.CutAt)
		return planned, msg
	case measured < planned && t.info.Truncated:
		return planned, fmt.Sprintf("cut off after %d of %d requests (the run crashed or is still running): %d missing", measured, planned, planned-measured)
	case measured < planned && t.header.Minor < 6:
		return planned, fmt.Sprintf("stopped after %d of %d requests: %d never sent (or in flight when the run was killed: a trace of format 1.%d does not tell the two apart)", measured, planned, planned-measured, t.header.Minor)
	case measured < planned:
		return planned, fmt.Sprintf("stopped after %d of %d requests: %d never sent", measured, planned, planned-measured)
	case t.info.Truncated:
		return planned, "the trace ends in a cut-off tail"
	}
	return planned, ""
}

// RatePhases reports whether some, and whether all, of the result's runs
// are rate phases (open loop at a fixed arrival rate), which have a rate
// and no concurrency: grouped by concurrency they would all pool into one
// "concurrency 0" row.
func (res *Result) RatePhases() (some, all bool) {
	all = len(res.runs) > 0
	for _, r := range res.runs {
		if r.phase.Rate > 0 {
			some = true
		} else {
			all = false
		}
	}
	return some, all
}

// Partial lists, one line per trace, the traces that hold fewer requests
// than their run planned ("label: stopped after …"); nil when all are whole.
func (res *Result) Partial() []string {
	var out []string
	for _, t := range res.Traces {
		if t.Partial != "" {
			out = append(out, t.Label+": "+t.Partial)
		}
	}
	return out
}

// SetTruncated records that the trace ended in a cut-off tail (a crash or a
// run still being written); the result says so.
func (t *TraceAcc) SetTruncated(v bool) { t.info.Truncated = v }

// run is one phase of one trace: one concurrency level, input length and
// repeat. Every group is a union of runs.
type run struct {
	trace *TraceAcc
	phase trace.Phase

	ok, failed int
	failedBy   map[trace.ErrorClass]int
	// failedEx is ErrorText of the first failure of each class: the
	// server's own words for tables and warnings.
	failedEx map[trace.ErrorClass]string
	sources  map[string]int

	firstSend, lastToken, lastDone int64
	outTokens, inTokens            int64
	good                           int

	dists []Dist  // by registry index (request and token scopes)
	peer  peerRun // a peer definition set's own tallies (peers.go)
	warn  runWarn
	state *runState // the server's state during the run, once computed
	cache cacheAcc  // warm and cold requests, for prefill_saved (cache.go)

	// turn is the session turn a turn run holds (1, 2, …), 0 for a phase
	// run. turns are a phase run's turn runs, once one of its records
	// carries a session: --by turn groups them instead of the phase runs.
	turn  int
	turns map[int]*run
}

// maxTurnKey is the largest turn --by turn keeps apart: workloads have at
// most 1,000 turns a session, and a trace claiming more groups them with
// turn 1,000 rather than making a run (and its distributions) per claim.
const maxTurnKey = 1000

// turnOf is the turn --by turn files a record under: its session turn, and
// 1 for a request outside any session (a conversation of one turn: its
// prompt is new to the server as a first turn's is).
func turnOf(rec *trace.Record) int {
	return min(max(rec.Turn, 1), maxTurnKey)
}

// turnRun returns the turn run of r that rec belongs to, nil while r has
// seen no session. A run's first session record makes its turn runs; the
// single-turn requests before it (a phase mixing both) go to turn 1 as a
// copy of what r holds so far, so each turn run holds every one of its
// requests.
func (t *TraceAcc) turnRun(r *run, rec *trace.Record) *run {
	if r.turns == nil {
		if rec.Session == "" && rec.Turn <= 1 {
			return nil
		}
		r.turns = map[int]*run{}
		if r.ok+r.failed > 0 {
			c := r.clone()
			c.turn = 1
			r.turns[1] = c
		}
	}
	n := turnOf(rec)
	s, ok := r.turns[n]
	if !ok {
		s = newRun(t, r.phase)
		s.turn = n
		r.turns[n] = s
	}
	return s
}

// clone is a deep copy of r's accumulated state (without its turn runs).
func (r *run) clone() *run {
	c := *r
	c.failedBy = maps.Clone(r.failedBy)
	c.failedEx = maps.Clone(r.failedEx)
	c.sources = maps.Clone(r.sources)
	c.dists = make([]Dist, len(r.dists))
	for i := range r.dists {
		c.dists[i].Merge(&r.dists[i])
	}
	c.warn.mismatchBy = maps.Clone(r.warn.mismatchBy)
	c.warn.stoppedFinish = maps.Clone(r.warn.stoppedFinish)
	c.warn.head = slices.Clone(r.warn.head)
	c.cache.warm = slices.Clone(r.cache.warm)
	c.peer.reqs = slices.Clone(r.peer.reqs)
	c.state, c.turns = nil, nil
	return &c
}

func newRun(t *TraceAcc, p trace.Phase) *run {
	return &run{trace: t, phase: p, failedBy: map[trace.ErrorClass]int{}, failedEx: map[trace.ErrorClass]string{}, sources: map[string]int{},
		firstSend: math.MaxInt64, dists: make([]Dist, len(Metrics))}
}

func (t *TraceAcc) runFor(phase int) *run {
	if r, ok := t.phases[phase]; ok {
		return r
	}
	p := trace.Phase{Index: phase, Name: fmt.Sprintf("phase%d", phase)}
	for _, hp := range t.header.Phases {
		if hp.Index == phase {
			p = hp
			break
		}
	}
	r := newRun(t, p)
	t.phases[phase] = r
	t.a.runs = append(t.a.runs, r)
	return r
}

// Add analyses one record. The record is not kept: it may be reused by the
// reader as soon as Add returns.
func (t *TraceAcc) Add(rec *trace.Record) {
	t.info.Records++
	if rec.Clipped > 0 {
		t.info.Clipped++
		t.info.ClippedBytes += rec.Clipped
	}
	if rec.Notes != "" && (strings.Contains(rec.Notes, "after the first") || strings.Contains(rec.Notes, "after the finish")) {
		if t.info.LateFinish == 0 {
			t.info.LateNote = rec.ID + ": " + rec.Notes
		}
		t.info.LateFinish++
	}
	if t.perPhase == nil {
		t.perPhase = map[int]int{}
	}
	t.perPhase[rec.Phase]++
	t.noteFirstToken(rec)
	if rec.Warmup {
		t.info.Warmup++
		return
	}
	if rec.Error != nil && rec.Error.Class == trace.ErrNotSent {
		t.info.NotSent++
		return
	}
	t.late.observe(rec)
	a := t.a
	r := t.runFor(rec.Phase)
	f := &a.f
	f.build(rec, t.counter, &a.defs)
	sub := t.turnRun(r, rec)
	t.addTo(r, f, rec, true)
	if sub != nil {
		t.addTo(sub, f, rec, false)
	}
}

// addTo adds one request's facts to a run. The trace's own tallies
// (salted hits, token sources, usage checks) are counted once, with the
// phase run (primary); a turn run (turnRun) takes the same request again.
func (t *TraceAcc) addTo(r *run, f *facts, rec *trace.Record, primary bool) {
	a := t.a
	if r.phase.MaxTokens == 0 && rec.MaxTokens > 0 {
		r.phase.MaxTokens = rec.MaxTokens
	}
	for i, m := range Metrics {
		if m.request != nil {
			m.request(f, &a.defs, &r.dists[i])
		}
	}
	if rec.Sent < r.firstSend && (rec.Sent > 0 || rec.Scheduled == 0) {
		r.firstSend = rec.Sent
	}
	if rec.Done > r.lastDone {
		r.lastDone = rec.Done
	}
	if !f.ok {
		r.failed++
		r.failedBy[rec.Error.Class]++
		if _, ok := r.failedEx[rec.Error.Class]; !ok {
			r.failedEx[rec.Error.Class] = ErrorText(rec.Error)
		}
		return
	}
	r.ok++
	r.cache.observe(f, rec, &t.header)
	// A request log's prompts (block_tokens) share the log's hash blocks
	// with each other, so a salted one may rightly hit what an earlier
	// request of the same run left in the cache.
	if primary && t.header.Salt && f.input > 0 && t.header.Options["block_tokens"] == "" {
		// A conversation's earlier turns and a shared system prompt come
		// before the salt and may be cached (SentInputTokens counts them
		// with the turn's own part, InputTokens): only what is past them
		// must be new to the server.
		shared := max(rec.SentInputTokens-rec.InputTokens, 0)
		if c := f.timers().cached - shared; c > 0 && 2*c > f.input-shared && c <= f.input-shared {
			if t.info.SaltedHits == 0 {
				t.info.SaltedHit = fmt.Sprintf("%s: %d of %d prompt tokens", rec.ID, c, f.input)
			}
			t.info.SaltedHits++
		}
	}
	if primary && !t.header.Salt && strings.HasPrefix(t.header.Options["prefix"], "shared") {
		if c := f.timers().cached; c >= 0 {
			t.info.RepeatCounted++
			if c > 0 {
				t.info.RepeatHits++
			}
		}
	}
	src := f.source
	if a.defs.peer {
		r.observePeer(a, f, primary)
		if f.pv.source != "" {
			src = f.pv.source
		}
	}
	r.sources[src]++
	if primary {
		t.info.TokenSources[src]++
	}
	if f.content > 0 && f.last > r.lastToken {
		r.lastToken = f.last
	}
	r.outTokens += int64(f.tokens)
	r.inTokens += int64(f.input)
	if a.meetsSLO(f) {
		r.good++
	}
	r.warn.observe(f, rec, t, primary)
	if v, ok := f.perStream(&a.defs); ok {
		r.warn.observeSpeed(v)
	}
}

func (a *Analyzer) meetsSLO(f *facts) bool {
	if f.content == 0 {
		return false
	}
	if a.slo.TTFT > 0 && time.Duration(f.ttft) > a.slo.TTFT {
		return false
	}
	if a.slo.TPOT > 0 {
		// vLLM's convention: a request with fewer than two tokens has TPOT 0.
		if v, ok := f.tpotMs(&a.defs); ok && v > float64(a.slo.TPOT)/1e6 {
			return false
		}
	}
	if a.slo.E2E > 0 && time.Duration(f.e2e) > a.slo.E2E {
		return false
	}
	return true
}

// window is the throughput window of a run in seconds.
func (r *run) window(d *DefinitionSet) float64 {
	end := r.lastToken
	if d.window == windowDone {
		end = r.lastDone
	}
	if r.firstSend == math.MaxInt64 || end <= r.firstSend {
		return 0
	}
	return float64(end-r.firstSend) / 1e9
}

// keyValue returns the value of a grouping key for a run.
func (r *run) keyValue(k string) any {
	switch k {
	case KeyLabel:
		return r.trace.info.Label
	case KeyPhase:
		return r.phase.Name
	case KeyConcurrency:
		return r.phase.Concurrency
	case KeyInputTokens:
		return r.phase.InputTokens
	case KeyRepeat:
		return r.phase.Repeat
	case KeyRate:
		// Open-loop phases' arrival rate (requests/s); 0 for burst and
		// closed phases, which have a concurrency instead.
		return r.phase.Rate
	case KeyTurn:
		// A phase run without sessions is all first turns (turnOf).
		return max(r.turn, 1)
	}
	return nil
}

// Grouping keys.
const (
	KeyLabel       = "label"
	KeyPhase       = "phase"
	KeyConcurrency = "concurrency"
	KeyInputTokens = "input_tokens"
	KeyRepeat      = "repeat"
	KeyRate        = "rate"
	// KeyTurn groups by session turn (1, 2, …; requests outside a session
	// are turn 1): per-turn TTFT shows what a conversation's growing,
	// cached prefix does to each turn.
	KeyTurn = "turn"
)

// Keys are the grouping keys in their canonical order.
var Keys = []string{KeyLabel, KeyPhase, KeyConcurrency, KeyRate, KeyInputTokens, KeyRepeat, KeyTurn}

// NormalizeKey accepts a key as users type it ("input-tokens") and returns
// its canonical name.
func NormalizeKey(k string) (string, error) {
	k = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "-", "_")
	for _, x := range Keys {
		if x == k {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown grouping key %q: use one of label, phase, concurrency, rate, input-tokens, repeat, turn", k)
}

// Result is the analysis of every trace added, ready to be grouped.
type Result struct {
	Definitions DefinitionSet
	SLO         SLO
	Traces      []TraceInfo
	// Warnings that belong to a whole trace (errors clustered, slowing
	// down, truncated, tokenizer unavailable).
	Warnings []Warning

	runs []*run
	// turnRuns are runs split by session turn, for --by turn: each phase
	// run's turn runs in turn order, or the phase run itself (all turn 1)
	// when it has none.
	turnRuns []*run
	// coldFits caches the cold-request fit of each label and load
	// (cache.go).
	coldFits map[string]*coldRef
	// want are the statistics asked for beyond the standard ones, by
	// metric (Want).
	want map[string][]string
}

// Want asks every group for statistics beyond those it always computes:
// any percentile of a per-request or per-token metric (ttft_p95,
// itl_p99.9). Names that are not such a statistic are ignored here
// (LookupMetric judges names); groups built afterwards hold the values
// under the names asked for, in tables, JSON and claims alike.
func (res *Result) Want(names ...string) {
	for _, name := range names {
		m, stat, err := LookupMetric(name)
		if err != nil || stat == "" || slices.Contains(m.Stats(), stat) {
			continue
		}
		if _, ok := ParsePercentile(stat); !ok {
			continue
		}
		if res.want == nil {
			res.want = map[string][]string{}
		}
		if !slices.Contains(res.want[m.Name], stat) {
			res.want[m.Name] = append(res.want[m.Name], stat)
		}
	}
}

// byTurn reports whether keys group by session turn.
func byTurn(keys []string) bool { return slices.Contains(keys, KeyTurn) }

// pool is the runs a grouping by keys partitions.
func (res *Result) pool(keys []string) []*run {
	if byTurn(keys) {
		return res.turnRuns
	}
	return res.runs
}

// Labels returns the distinct labels of the traces whose runs make up g,
// sorted: a claim warns when one number pools several servers.
func (g *Group) Labels() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range g.runs {
		if l := r.trace.info.Label; !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// Result finishes the analysis. The Analyzer may keep taking records; a
// later Result includes them.
func (a *Analyzer) Result() *Result {
	res := &Result{Definitions: a.defs, SLO: a.slo, runs: append([]*run(nil), a.runs...)}
	sort.SliceStable(res.runs, func(i, j int) bool {
		ri, rj := res.runs[i], res.runs[j]
		if ri.trace.idx != rj.trace.idx {
			return ri.trace.idx < rj.trace.idx
		}
		return ri.phase.Index < rj.phase.Index
	})
	for _, r := range res.runs {
		if r.turns == nil {
			res.turnRuns = append(res.turnRuns, r)
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(r.turns)) {
			res.turnRuns = append(res.turnRuns, r.turns[n])
		}
	}
	for _, t := range a.traces {
		t.info.Planned, t.info.Partial = t.partial()
		res.Traces = append(res.Traces, t.info)
	}
	res.Warnings = traceWarnings(a, res)
	res.Warnings = append(res.Warnings, superlinearWarnings(res)...)
	return res
}

// Group is a set of runs sharing key values, with every metric by name.
type Group struct {
	Keys map[string]any `json:"keys"`
	// Values holds every metric under every statistic name
	// ("ttft", "ttft_p99", "per_stream_tps_min" …).
	Values        map[string]Value `json:"metrics"`
	FailedByClass map[string]int   `json:"requests_failed_by_class"`
	// ErrorExamples is, per error class, the first failure's message with
	// the server's own explanation (ErrorText), as the server sent it.
	ErrorExamples map[string]string `json:"error_examples,omitempty"`
	TokenSources  map[string]int    `json:"output_token_sources"`
	Runs          int               `json:"runs"`
	Warnings      []Warning         `json:"-"`
	// WarningCodes names the group's warnings; the document's top-level
	// warnings list carries their evidence.
	WarningCodes []string `json:"warnings"`
	// Notes say, per metric, why it is absent or leaves requests out
	// (prefill_saved: no cold requests to compare with, …).
	Notes   map[string]string `json:"notes,omitempty"`
	samples map[string][]float64
	runs    []*run
}

// Value is a metric's value with its 95% interval where it has one. Lo or
// Hi is ±Inf when there are too few samples to bound that side, NaN when
// the statistic has no interval (mean, min, max, sums).
type Value struct {
	Value float64
	Lo    float64
	Hi    float64
	N     int64
}

// Valid reports whether the value could be computed.
func (v Value) Valid() bool { return !math.IsNaN(v.Value) }

// HasInterval reports whether the value carries an interval.
func (v Value) HasInterval() bool { return !math.IsNaN(v.Lo) && !math.IsNaN(v.Hi) }

func point(v float64, n int64) Value { return Value{Value: v, Lo: math.NaN(), Hi: math.NaN(), N: n} }

// Groups partitions the runs by the given keys (label is always one of
// them) and returns the groups in a stable order: label in input order,
// then each key ascending.
func (res *Result) Groups(by []string) []*Group {
	keys := []string{KeyLabel}
	for _, k := range by {
		if k != KeyLabel {
			keys = append(keys, k)
		}
	}
	index := map[string]*Group{}
	var order []*Group
	labelOrder := map[string]int{}
	// Phases sort in the order they ran, not by name ("c16" < "c4").
	phaseOrder := map[string]int{}
	for _, r := range res.pool(keys) {
		if _, ok := phaseOrder[r.phase.Name]; !ok {
			phaseOrder[r.phase.Name] = len(phaseOrder)
		}
		if _, ok := labelOrder[r.trace.info.Label]; !ok {
			labelOrder[r.trace.info.Label] = len(labelOrder)
		}
		sel := map[string]any{}
		var id strings.Builder
		for _, k := range keys {
			v := r.keyValue(k)
			sel[k] = v
			fmt.Fprintf(&id, "%s=%v\x00", k, v)
		}
		g, ok := index[id.String()]
		if !ok {
			g = &Group{Keys: sel}
			index[id.String()] = g
			order = append(order, g)
		}
		g.runs = append(g.runs, r)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if la, lb := labelOrder[a.Keys[KeyLabel].(string)], labelOrder[b.Keys[KeyLabel].(string)]; la != lb {
			return la < lb
		}
		for _, k := range keys[1:] {
			if k == KeyPhase {
				if pa, pb := phaseOrder[a.Keys[k].(string)], phaseOrder[b.Keys[k].(string)]; pa != pb {
					return pa < pb
				}
				continue
			}
			if c := compareAny(a.Keys[k], b.Keys[k]); c != 0 {
				return c < 0
			}
		}
		return false
	})
	for _, g := range order {
		res.fill(g)
	}
	return order
}

func compareAny(a, b any) int {
	switch x := a.(type) {
	case int:
		y := b.(int)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

// Select merges every run matching sel (key → value as text) into one
// group, the way a claim reads a trace. It returns nil when nothing
// matches.
func (res *Result) Select(sel map[string]string) *Group {
	g := &Group{Keys: map[string]any{}}
	for k, v := range sel {
		g.Keys[k] = v
	}
	keys := slices.Collect(maps.Keys(sel))
	for _, r := range res.pool(keys) {
		if r.matches(sel) {
			g.runs = append(g.runs, r)
		}
	}
	if len(g.runs) == 0 {
		return nil
	}
	res.fill(g)
	return g
}

func (r *run) matches(sel map[string]string) bool {
	for k, v := range sel {
		if fmt.Sprint(r.keyValue(k)) != v {
			return false
		}
	}
	return true
}

// fill computes every metric of g from its runs.
func (res *Result) fill(g *Group) {
	g.Values = map[string]Value{}
	g.samples = map[string][]float64{}
	g.FailedByClass = map[string]int{}
	g.ErrorExamples = nil
	g.Notes = nil
	g.TokenSources = map[string]int{}
	g.Runs = len(g.runs)
	for _, r := range g.runs {
		for c, n := range r.failedBy {
			g.FailedByClass[string(c)] += n
		}
		for c, m := range r.failedEx {
			if _, ok := g.ErrorExamples[string(c)]; !ok {
				if g.ErrorExamples == nil {
					g.ErrorExamples = map[string]string{}
				}
				g.ErrorExamples[string(c)] = m
			}
		}
		for s, n := range r.sources {
			g.TokenSources[s] += n
		}
	}
	d := &res.Definitions
	for i, m := range Metrics {
		switch m.Scope {
		case PerRequest, PerToken:
			var all Dist
			for _, r := range g.runs {
				all.Merge(&r.dists[i])
			}
			setDistValues(g, m, &all, d, res.want[m.Name])
			if m.Scope == PerRequest {
				g.samples[m.Name] = all.Values()
			}
		case PerRun:
			var all Dist
			for _, r := range g.runs {
				if r.turn > 0 {
					// The turns of a run interleave in time: no window
					// (throughput, goodput) belongs to one turn.
					continue
				}
				if v, ok := m.run(r, d); ok {
					all.Add(v)
				}
			}
			c, lo, hi := all.QuantileCI(0.5, Confidence)
			g.Values[m.Name] = Value{c, lo, hi, all.N()}
			g.Values[m.Name+"_mean"] = point(all.Mean(), all.N())
			g.Values[m.Name+"_min"] = point(all.Min(), all.N())
			g.Values[m.Name+"_max"] = point(all.Max(), all.N())
			g.samples[m.Name] = all.Values()
		case AcrossInputs:
			v := point(math.NaN(), 0)
			if f, ok := fitExponent(g.runs, metricIndex[m.fit]); ok {
				v = f.Value
			}
			g.Values[m.Name] = v
		case Count:
			sum := 0.0
			for _, r := range g.runs {
				v, _ := m.run(r, d)
				sum += v
			}
			g.Values[m.Name] = point(sum, int64(len(g.runs)))
		}
	}
	res.fillCache(g)
	// Group-scope metrics need the concurrency-1 baseline of the same
	// label and input length.
	base := res.baseline(g)
	for _, m := range Metrics {
		if m.Scope != PerGroup {
			continue
		}
		v, ok := m.group(g, base)
		if !ok {
			v = math.NaN()
		}
		g.Values[m.Name] = point(v, 1)
	}
	g.Warnings = groupWarnings(res, g)
	g.WarningCodes = []string{}
	for _, w := range g.Warnings {
		g.WarningCodes = append(g.WarningCodes, w.Code)
	}
}

// baseline is the concurrency-1 group of g's labels and input lengths, or
// nil when the trace has none.
func (res *Result) baseline(g *Group) *Group {
	labels, inputs, turns := map[string]bool{}, map[int]bool{}, map[int]bool{}
	allOne := true
	for _, r := range g.runs {
		labels[r.trace.info.Label] = true
		inputs[r.phase.InputTokens] = true
		turns[r.turn] = true
		if r.phase.Concurrency != 1 {
			allOne = false
		}
	}
	// A group of turn runs is held against the same turns at
	// concurrency 1, whose window is theirs alone too.
	pool := res.runs
	if slices.ContainsFunc(g.runs, func(r *run) bool { return r.turn > 0 }) {
		pool = res.turnRuns
	}
	b := &Group{Keys: map[string]any{KeyConcurrency: 1}}
	for _, r := range pool {
		if r.phase.Concurrency == 1 && labels[r.trace.info.Label] && inputs[r.phase.InputTokens] && turns[r.turn] {
			b.runs = append(b.runs, r)
		}
	}
	if len(b.runs) == 0 {
		return nil
	}
	if allOne {
		b.runs = g.runs
	}
	b.Values = map[string]Value{}
	m := Metrics[metricIndex["aggregate_tps"]]
	var all Dist
	for _, r := range b.runs {
		if v, ok := m.run(r, &res.Definitions); ok {
			all.Add(v)
		}
	}
	b.Values["aggregate_tps"] = point(all.Quantile(0.5), all.N())
	return b
}

var quantiles = []struct {
	stat string
	q    float64
}{{"p10", 0.10}, {"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}}

// setDistValues puts a distribution's statistics into g: the median, mean,
// min, max and standard percentiles, and the extra percentiles asked for.
// A percentile's value is the definition set's (linear interpolation, or
// GuideLLM's nearest rank); its 95% interval is the order-statistic one
// whatever the set.
func setDistValues(g *Group, m *Metric, d *Dist, defs *DefinitionSet, extra []string) {
	n := d.N()
	quantile := func(q float64) Value {
		c, lo, hi := d.QuantileCI(q, Confidence)
		if defs.pct != pctLinear {
			c = d.peerQuantile(q, defs.pct)
		}
		return Value{c, lo, hi, n}
	}
	g.Values[m.Name] = quantile(0.5)
	g.Values[m.Name+"_mean"] = point(d.Mean(), n)
	g.Values[m.Name+"_min"] = point(d.Min(), n)
	g.Values[m.Name+"_max"] = point(d.Max(), n)
	for _, q := range quantiles {
		g.Values[m.Name+"_"+q.stat] = quantile(q.q)
	}
	for _, stat := range extra {
		if q, ok := ParsePercentile(stat); ok {
			g.Values[m.Name+"_"+stat] = quantile(q)
		}
	}
}

// Samples returns the exact per-request (or per-run) values of a metric in
// g, for significance tests; nil when they were folded into a histogram.
func (g *Group) Samples(metric string) []float64 { return g.samples[metric] }

// AddReader streams every record of r into a new trace of the analyzer
// and records whether its tail was cut off. label "" takes the header's.
func (a *Analyzer) AddReader(label, path string, r *trace.Reader) error {
	acc := a.Trace(label, path, r.Header())
	h := r.Header()
	r.IncludeScrapes()
	for r.Scan() {
		if s := r.Scrape(); s != nil {
			acc.AddScrape(s)
			if a.onScrape != nil {
				a.onScrape(acc.info.Label, s)
			}
			continue
		}
		if a.onRecord != nil {
			a.onRecord(acc.info.Label, &h, r.Record())
		}
		acc.Add(r.Record())
	}
	acc.SetTruncated(r.Truncated())
	if p, ok := r.Progress(); ok && r.Truncated() && p.Sent >= 0 {
		acc.info.SentByCut, acc.info.CutAt = &p.Sent, p.T
	}
	if n, first := r.Skipped(); n > 0 {
		acc.SetDamaged(fmt.Sprintf("%d %s could not be read and %s skipped (the first: %v)", n, plural(n, "entry", "entries"), plural(n, "was", "were"), first))
	}
	if err := r.Err(); err != nil {
		// The records before the damage are as good as any: use them, and
		// say the rest could not be read. A file with none is refused.
		if acc.info.Records == 0 {
			return err
		}
		acc.SetDamaged(joinDamage(acc.info.Damaged, fmt.Sprintf("nothing after record %d could be read (%v)", acc.info.Records, err)))
	}
	return nil
}

// SetDamaged records that part of the trace could not be read; the result
// says so, and claims over it are partial.
func (t *TraceAcc) SetDamaged(msg string) { t.info.Damaged = msg }

func joinDamage(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Input is one trace file to analyse; Label "" takes the header's label,
// else the file name.
type Input struct {
	Label string
	Path  string // "-" with Stdin set reads Stdin
	// Stdin is the reader of Path "-" (at most one Input may use it).
	Stdin io.Reader
}

// ParseInput reads a command-line trace argument: "name=path" labels the
// trace, a bare path (or one that exists as a file even though it contains
// "=") has no label, "-" is standard input.
func ParseInput(arg string) Input {
	if _, err := os.Stat(arg); err == nil || arg == "-" {
		return Input{Path: arg}
	}
	if l, p, ok := strings.Cut(arg, "="); ok && l != "" && p != "" {
		return Input{Label: l, Path: p}
	}
	return Input{Path: arg}
}

// AnalyzeFiles reads every input in turn (one stream each, bounded memory)
// and returns the analysis. It is what `llmreplay analyze`, `check` and
// `bench` all call. A trace without a label of its own and none given is
// labelled by its file name.
func AnalyzeFiles(o Options, inputs ...Input) (*Result, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no trace given: pass one or more TRACE files (name=path to label one)")
	}
	a, err := New(o)
	if err != nil {
		return nil, err
	}
	stdinUsed := false
	for _, in := range inputs {
		var r *trace.Reader
		if in.Path == "-" {
			if in.Stdin == nil {
				return nil, errors.New("trace - (standard input) given without Input.Stdin")
			}
			if stdinUsed {
				return nil, errors.New("standard input (-) given twice: it can be read only once")
			}
			stdinUsed = true
			r, err = trace.NewReader(in.Stdin)
		} else {
			r, err = trace.Open(in.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("%v (is %s a trace written by llmreplay replay?)", err, in.Path)
		}
		label := in.Label
		if label == "" && r.Header().Label == "" {
			label = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(in.Path), ".zst"), ".trace")
		}
		if id := runIdentity(r.Header()); id != "" {
			if first, seen := a.runIDs[id]; seen {
				dl := label
				if dl == "" {
					dl = r.Header().Label
				}
				a.dups = append(a.dups, duplicate{path: in.Path, first: first, label: dl})
				r.Close()
				continue
			}
			if a.runIDs == nil {
				a.runIDs = map[string]string{}
			}
			a.runIDs[id] = in.Path
		}
		err = a.AddReader(label, in.Path, r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", in.Path, err)
		}
	}
	return a.Result(), nil
}

// hostLine is the client machine in one line.
func hostLine(h trace.Host) string {
	if h.OS == "" && h.CPU == "" {
		return ""
	}
	s := h.OS + "/" + h.Arch
	if h.CPU != "" {
		s += ", " + h.CPU
	}
	if h.Cores > 0 {
		s += fmt.Sprintf(", %d cores", h.Cores)
	}
	return s
}

// optTimeScale is the header option in which a capacity search records the
// simulator's time scale (capacity/live writes it). Nothing else records
// one: a trace of a separately started simulator does not say its scale.
const optTimeScale = "capacity_time_scale"

// simTimeScale reads the simulator's time scale from a header, 0 when the
// run was at the profile's pace (1) or the header does not say.
func simTimeScale(h trace.Header) float64 {
	if !h.Simulated {
		return 0
	}
	v, err := strconv.ParseFloat(h.Options[optTimeScale], 64)
	if err != nil || !(v > 0) || v == 1 || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// TimeScaleNote says, for a trace of the simulator run at a time scale,
// what that does to its numbers; "" otherwise.
func (t TraceInfo) TimeScaleNote() string {
	if t.SimTimeScale == 0 {
		return ""
	}
	profile := ""
	if t.SimProfile != "" {
		profile = " (profile " + t.SimProfile + ")"
	}
	f := strconv.FormatFloat(t.SimTimeScale, 'g', -1, 64)
	inv := strconv.FormatFloat(1/t.SimTimeScale, 'g', 3, 64)
	return fmt.Sprintf("the simulator%s ran at time scale %s: every duration is %s× the profile's, so these latencies read %s× and these speeds %s× what the profile models",
		profile, f, f, f, inv)
}
