package analyze

import (
	"math"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// RequestRow is one request's metrics, as `trace cat --requests` prints
// them (one JSON object per line). It is computed by the same code as the
// tables' per-request metrics (docs/METRICS.md, "Per-request rows"), so a
// row and a table never disagree on what a request's TTFT or speed was.
// Times are seconds to the nanosecond, speeds tok/s to 0.001; a figure that does not exist for this request (no
// content arrived, too few tokens, no response end) is null.
type RequestRow struct {
	Label       string `json:"label"`
	ID          string `json:"id"`
	Index       int    `json:"index"`
	Phase       string `json:"phase"`
	PhaseIndex  int    `json:"phase_index"`
	Concurrency int    `json:"concurrency"`
	Repeat      int    `json:"repeat"`
	Warmup      bool   `json:"warmup,omitempty"`
	// Session and Turn place a conversation's turn (trace 1.4); absent
	// for a single request.
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	OK      bool   `json:"ok"`
	Status  int    `json:"status"`

	// SentS is the actual send, seconds since the run start; LatenessS
	// is how late it was against the schedule.
	SentS     float64  `json:"sent_s"`
	LatenessS float64  `json:"lateness_s"`
	TTFTS     *float64 `json:"ttft_s"`
	E2ES      *float64 `json:"e2e_s"`
	TPOTS     *float64 `json:"tpot_s"`

	// InputTokens is the whole prompt the request sent: the server's
	// usage count of it, else (a conversation's turn) the conversation as
	// sent, counted by the workload's tokenizer, else the workload's count.
	// NewInputTokens is, for a turn, the workload's count of what the turn
	// added (its new message; absent for a single request, whose whole
	// prompt is new).
	InputTokens    int `json:"input_tokens"`
	NewInputTokens int `json:"new_input_tokens,omitempty"`
	// CachedTokens is the server's count of prompt tokens it served from
	// its cache (server_cached_tokens); absent when it reports none.
	CachedTokens       *int     `json:"cached_tokens,omitempty"`
	OutputTokens       int      `json:"output_tokens"`
	OutputTokensSource string   `json:"output_tokens_source"`
	PerStreamTPS       *float64 `json:"per_stream_tps"`
	Chunks             int      `json:"chunks"`

	FinishReason string `json:"finish_reason,omitempty"`
	ErrorClass   string `json:"error_class,omitempty"`
	// ErrorMessage is ErrorText: the error with the server's own words,
	// clipped; as the server sent it (JSON escapes it, a reader must
	// escape it before showing it on a terminal).
	ErrorMessage string `json:"error_message,omitempty"`

	// FirstNs and LastNs are the arrivals of the first and last chunk
	// carrying text or reasoning (ns since the run start), −1 when none
	// did: the span TTFT and per-stream speed are read from, for tables
	// that show times (export), not printed by trace cat.
	FirstNs int64 `json:"-"`
	LastNs  int64 `json:"-"`
}

// RequestLister turns the records of one trace into RequestRows, counting
// received text with the trace's tokenizer as the analysis does.
type RequestLister struct {
	label   string
	phases  map[int]trace.Phase
	defs    DefinitionSet
	counter *counter
	f       facts
}

// NewRequestLister prepares rows for a trace with header h; label ""
// takes the header's; definitions "" is the default set.
func NewRequestLister(label string, h trace.Header, definitions string) (*RequestLister, error) {
	d, err := LookupDefinitions(definitions)
	if err != nil {
		return nil, err
	}
	if label == "" {
		label = h.Label
	}
	label = safetext.Cut(label, safetext.MaxName) // on every row
	name := h.Tokenizer
	if name == "" {
		name = DefaultTokenizer
	}
	l := &RequestLister{label: label, phases: map[int]trace.Phase{}, defs: d,
		counter: newCounter(name, h.TokenizerPath, h.TokenizerDigest, "")}
	for _, p := range h.Phases {
		l.phases[p.Index] = p
	}
	return l, nil
}

// TokenizerFallback says why the trace's tokenizer could not be loaded
// (output tokens are then chunk counts, and the rows' source says so); ""
// when it loaded.
func (l *RequestLister) TokenizerFallback() string { return l.counter.fallback }

// Row computes rec's row. rec is not kept.
func (l *RequestLister) Row(rec *trace.Record) RequestRow {
	l.f.build(rec, l.counter, &l.defs)
	p, ok := l.phases[rec.Phase]
	if !ok {
		p = trace.Phase{Index: rec.Phase}
	}
	return rowOf(&l.f, rec, l.label, p, &l.defs)
}

// rowOf is the row of the request f was built from.
func rowOf(f *facts, rec *trace.Record, label string, p trace.Phase, d *DefinitionSet) RequestRow {
	row := RequestRow{
		Label: label, ID: rec.ID, Index: rec.Index, Phase: p.Name, PhaseIndex: rec.Phase,
		Concurrency: p.Concurrency, Repeat: p.Repeat, Warmup: rec.Warmup, OK: f.ok, Status: rec.Status,
		SentS: seconds(rec.Sent), LatenessS: seconds(rec.Sent - rec.Scheduled),
		InputTokens: f.input, OutputTokens: f.tokens, OutputTokensSource: f.source,
		Chunks: len(rec.Chunks), FinishReason: rec.FinishReason,
		Session: rec.Session, Turn: rec.Turn,
		FirstNs: -1, LastNs: -1,
	}
	if rec.Turn > 0 {
		row.NewInputTokens = rec.InputTokens
	}
	if f.content > 0 {
		row.FirstNs, row.LastNs = f.first, f.last
	}
	if c := f.timers().cached; c >= 0 {
		row.CachedTokens = &c
	}
	if f.content > 0 {
		row.TTFTS = ptr(seconds(f.ttft))
	}
	if f.e2e > 0 {
		row.E2ES = ptr(seconds(f.e2e))
	}
	// Speeds only for successful requests, as in the tables: the median
	// of the ok rows' per_stream_tps is the table's per_stream_tps.
	if v, ok := f.tpotMs(d); ok && f.ok {
		row.TPOTS = ptr(math.Round(v*1e6) / 1e9) // ms → s, to the ns
	}
	if v, ok := f.perStream(d); ok && f.ok {
		row.PerStreamTPS = ptr(math.Round(v*1e3) / 1e3)
	}
	if d.peer {
		peerRow(f, d, &row)
	}
	if rec.Error != nil {
		row.ErrorClass, row.ErrorMessage = string(rec.Error.Class), ErrorText(rec.Error)
	}
	return row
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

func ptr(v float64) *float64 { return &v }

// peerRow reads a row's times, tokens and speeds the way a peer definition
// set does (peers.go), the same values its tables take.
func peerRow(f *facts, d *DefinitionSet, row *RequestRow) {
	if !f.ok {
		return // a failure reads alike in every set: its time to failing
	}
	row.TTFTS, row.E2ES, row.TPOTS, row.PerStreamTPS = nil, nil, nil, nil
	row.OutputTokens, row.OutputTokensSource = max(f.pv.tokens, 0), f.pv.source
	row.InputTokens = f.pv.input
	if v, ok := f.peerTTFT(d); ok {
		row.TTFTS = ptr(math.Round(v*1e6) / 1e9)
	}
	if v, ok := f.peerE2E(); ok {
		row.E2ES = ptr(math.Round(v*1e6) / 1e9)
	}
	if !f.peerOK(d) {
		return
	}
	if v, _, ok := f.peerTPOT(d); ok {
		row.TPOTS = ptr(math.Round(v*1e6) / 1e9)
	}
	if v, ok := f.peerStream(d); ok {
		row.PerStreamTPS = ptr(math.Round(v*1e3) / 1e3)
	}
}
