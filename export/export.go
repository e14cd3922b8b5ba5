// Package export writes traces as tables other tools load: Parquet (with
// github.com/parquet-go/parquet-go) or CSV, one file per table:
//
//	requests  one row per request: ids, label, phase, concurrency, tokens,
//	          scheduled/sent/headers/first/last/done times, status, error
//	          class, finish reason, and the per-request figures as the
//	          analysis reads them (tokens, cached tokens, TTFT, TPOT, E2E,
//	          per-stream speed: analyze.TraceAcc.AddRow)
//	chunks    one row per streamed chunk: request id, time, bytes, tokens
//	runs      one row per run (label × phase × repeat) with the analysis's
//	          per-run metrics
//
// Times are int64 nanoseconds since the run start plus a UTC timestamp
// column (the trace's start_wall + offset). Records stream from the trace
// reader to the writers in batches, so memory is bounded by the batch, not
// the trace.
package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/outfile"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// RequestRow is one row of the requests table.
type RequestRow struct {
	Label       string `parquet:"label,dict"`
	RequestID   string `parquet:"request_id"`
	Index       int64  `parquet:"index"`
	Phase       int64  `parquet:"phase"`
	PhaseName   string `parquet:"phase_name,dict"`
	Concurrency int64  `parquet:"concurrency"`
	Repeat      int64  `parquet:"repeat"`
	Warmup      bool   `parquet:"warmup"`
	// InputTokens is the whole prompt the request sent, read as analyze
	// reads it (the server's usage count, else the conversation as sent,
	// else the workload's count); NewInputTokens the workload's count of
	// what the request added (a turn's new message; a single request's
	// whole prompt); CachedTokens the server's count of prompt tokens it
	// served from its cache, −1 when it reports none.
	InputTokens    int64 `parquet:"input_tokens"`
	NewInputTokens int64 `parquet:"new_input_tokens"`
	CachedTokens   int64 `parquet:"cached_tokens"`
	MaxTokens      int64 `parquet:"max_tokens"`
	// OutputTokens is the analysis' count and OutputSource where it came
	// from (usage, chunk-tokens, server-tokenizer, tokenizer, chunks).
	OutputTokens int64     `parquet:"output_tokens"`
	OutputSource string    `parquet:"output_tokens_source,dict"`
	ScheduledNs  int64     `parquet:"scheduled_ns"`
	SentNs       int64     `parquet:"sent_ns"`
	HeadersNs    int64     `parquet:"headers_ns"`
	FirstNs      int64     `parquet:"first_ns"` // first chunk with text or reasoning; −1: none
	LastNs       int64     `parquet:"last_ns"`  // last such chunk; −1: none
	DoneNs       int64     `parquet:"done_ns"`
	Sent         time.Time `parquet:"sent_at,timestamp(nanosecond)"`
	Status       int64     `parquet:"status"`
	OK           bool      `parquet:"ok"`
	ErrorClass   string    `parquet:"error_class,dict"`
	FinishReason string    `parquet:"finish_reason,dict"`
	Chunks       int64     `parquet:"chunks"`
	Bytes        int64     `parquet:"bytes"`
	// The request's metrics as analyze computes them (trace cat
	// --requests prints the same): NaN where the request has none.
	TTFTMs       float64 `parquet:"ttft_ms"`
	TPOTMs       float64 `parquet:"tpot_ms"`
	E2EMs        float64 `parquet:"e2e_ms"`
	PerStreamTPS float64 `parquet:"per_stream_tps"`
	// The server's own tokenizer's counts (its /tokenize) of the text
	// new_input_tokens counts (the workload's message, without the chat
	// template the server adds, so it is held against new_input_tokens,
	// not input_tokens) and of the text received: 0 not asked, -1 asked
	// and not answered.
	ServerNewInputTokens int64 `parquet:"server_new_input_tokens"`
	ServerTextTokens     int64 `parquet:"server_text_tokens"`
	// A conversation's session id and turn (1, 2, …; "" and 0 for a
	// single request), and the whole prompt as sent with the answers it
	// resent (0: not counted) (trace 1.4).
	Session         string `parquet:"session,dict"`
	Turn            int64  `parquet:"turn"`
	SentInputTokens int64  `parquet:"sent_input_tokens"`
	// With kernel receive stamps, how long after them the client's reads
	// returned: mean and largest over the request's chunks (trace 1.5; 0
	// with user-space times).
	UserDelayMeanNs int64 `parquet:"user_delay_mean_ns"`
	UserDelayMaxNs  int64 `parquet:"user_delay_max_ns"`
}

// ChunkRow is one row of the chunks table.
type ChunkRow struct {
	Label     string    `parquet:"label,dict"`
	RequestID string    `parquet:"request_id"`
	Phase     int64     `parquet:"phase"`
	Seq       int64     `parquet:"seq"`
	TNs       int64     `parquet:"t_ns"`
	T         time.Time `parquet:"t,timestamp(nanosecond)"`
	Bytes     int64     `parquet:"bytes"`
	Tokens    int64     `parquet:"tokens"` // the server's count for this chunk; 0 when unknown
	TextBytes int64     `parquet:"text_bytes"`
}

// MetricRow is one row of the server_metrics table: one sample of one
// scrape of the server's /metrics (or of a watched process), or a failed
// scrape with its error and no sample.
type MetricRow struct {
	Label  string    `parquet:"label,dict"`
	TNs    int64     `parquet:"t_ns"`
	T      time.Time `parquet:"t,timestamp(nanosecond)"`
	Source string    `parquet:"source,dict"` // metrics, process or clock (the client's own clock reading, 1.4)
	Target string    `parquet:"target,dict"`
	Name   string    `parquet:"name,dict"`
	Labels string    `parquet:"labels,dict"`
	Value  float64   `parquet:"value"`
	Error  string    `parquet:"error"`
}

// RunRow is one row of the runs table: the analysis's per-run values.
type RunRow struct {
	Label          string  `parquet:"label,dict"`
	Phase          int64   `parquet:"phase"`
	Repeat         int64   `parquet:"repeat"`
	Concurrency    int64   `parquet:"concurrency"`
	InputTokens    int64   `parquet:"input_tokens"`
	RequestsOK     int64   `parquet:"requests_ok"`
	RequestsFailed int64   `parquet:"requests_failed"`
	AggregateTPS   float64 `parquet:"aggregate_tps"`
	TotalTPS       float64 `parquet:"total_tps"`
	RequestsPerS   float64 `parquet:"requests_per_s"`
	PerStreamTPS   float64 `parquet:"per_stream_tps_p50"`
	TTFTP50        float64 `parquet:"ttft_p50_ms"`
	TTFTP99        float64 `parquet:"ttft_p99_ms"`
	TPOTP50        float64 `parquet:"tpot_p50_ms"`
	ITLP99         float64 `parquet:"itl_p99_ms"`
}

// Options say what to write where.
type Options struct {
	Dir    string // created if missing; files must not exist unless Force
	Format string // "parquet" or "csv"
	Force  bool
}

// Counts are what Export wrote.
type Counts struct {
	Requests, Chunks, Runs int64
	// Metrics counts server_metrics rows (samples and failed scrapes).
	Metrics int64
	Files   []string
}

// table is one output file fed row by row.
type table[T any] interface {
	Write(rows []T) error
	Close() error
}

const batch = 4096

// Export writes inputs' tables into o.Dir. Every file is written under a
// temporary name and renamed when whole, so a failure leaves no half file.
func Export(o Options, inputs ...analyze.Input) (c *Counts, err error) {
	if o.Format != "parquet" && o.Format != "csv" {
		return nil, fmt.Errorf("unknown format %q: use parquet or csv", o.Format)
	}
	// Every input is opened (its header read) before the folder is made:
	// a missing or broken trace is the common mistake, and it should leave
	// nothing behind, not even an empty folder.
	for _, in := range inputs {
		r, err := trace.Open(in.Path)
		if err != nil {
			return nil, err
		}
		r.Close()
	}
	if _, serr := os.Stat(o.Dir); errors.Is(serr, fs.ErrNotExist) {
		defer func() {
			if err != nil {
				os.Remove(o.Dir) // only if still empty
			}
		}()
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	names := []string{"requests", "chunks", "runs", "server_metrics"}
	paths := map[string]string{}
	ins := make([]string, len(inputs))
	for i, in := range inputs {
		ins[i] = in.Path
	}
	for _, n := range names {
		p := filepath.Join(o.Dir, n+"."+o.Format)
		// The rules every command's output follows: never over one of
		// its inputs (a trace named requests.csv, or a link to one), even
		// with Force; an existing table only with Force.
		if err := outfile.Check(p, o.Force, ins...); err != nil {
			return nil, err
		}
		paths[n] = p
	}
	c = &Counts{}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for _, n := range names {
		f, err := os.CreateTemp(o.Dir, "."+n+"-*.tmp")
		if err == nil {
			files = append(files, f)
			err = f.Chmod(0o644) // CreateTemp's 0600 is for secrets; tables are to share
		}
		if err != nil {
			return nil, err
		}
	}
	reqs, chunks, runs := newTable[RequestRow](o.Format, files[0]), table[ChunkRow](newAsync(newTable[ChunkRow](o.Format, files[1]))), newTable[RunRow](o.Format, files[2])
	metrics := newTable[MetricRow](o.Format, files[3])
	closed := false
	defer func() {
		if !closed {
			chunks.Close() // stops its goroutine on an early return
		}
	}()

	// One pass per trace feeds both the tables and the analysis (the runs
	// table), so a trace is decoded once.
	a, err := analyze.New(analyze.Options{})
	if err != nil {
		return nil, err
	}
	for _, in := range inputs {
		if err := exportTrace(in, a, reqs, chunks, metrics, c); err != nil {
			return nil, err
		}
	}
	res := a.Result()
	var rows []RunRow
	for _, g := range res.Groups([]string{analyze.KeyLabel, analyze.KeyPhase, analyze.KeyRepeat, analyze.KeyConcurrency, analyze.KeyInputTokens}) {
		v := func(k string) float64 { return g.Values[k].Value }
		rows = append(rows, RunRow{
			Label: fmt.Sprint(g.Keys[analyze.KeyLabel]), Phase: toInt(g.Keys[analyze.KeyPhase]), Repeat: toInt(g.Keys[analyze.KeyRepeat]),
			Concurrency: toInt(g.Keys[analyze.KeyConcurrency]), InputTokens: toInt(g.Keys[analyze.KeyInputTokens]),
			RequestsOK: int64(v("requests_ok")), RequestsFailed: int64(v("requests_failed")),
			AggregateTPS: v("aggregate_tps"), TotalTPS: v("total_tps"), RequestsPerS: v("requests_per_s"),
			PerStreamTPS: v("per_stream_tps_p50"), TTFTP50: v("ttft_p50"), TTFTP99: v("ttft_p99"), TPOTP50: v("tpot_p50"), ITLP99: v("itl_p99"),
		})
	}
	if err := runs.Write(rows); err != nil {
		return nil, err
	}
	c.Runs = int64(len(rows))
	closed = true
	for _, t := range []interface{ Close() error }{reqs, chunks, runs, metrics} {
		if err := t.Close(); err != nil {
			return nil, err
		}
	}
	for i, f := range files {
		if names[i] == "server_metrics" && c.Metrics == 0 {
			// Only when present: no scrape, no table (and no stale one
			// from an earlier export beside the new tables).
			f.Close()
			os.Remove(f.Name())
			os.Remove(paths[names[i]])
			continue
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		if err := os.Rename(f.Name(), paths[names[i]]); err != nil {
			return nil, err
		}
		c.Files = append(c.Files, paths[names[i]])
	}
	files = nil
	return c, nil
}

// ms is a row's seconds as milliseconds, NaN for none.
func ms(s *float64) float64 {
	if s == nil {
		return nan
	}
	return *s * 1e3
}

func orNaN(v *float64) float64 {
	if v == nil {
		return nan
	}
	return *v
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func exportTrace(in analyze.Input, a *analyze.Analyzer, reqs table[RequestRow], chunks table[ChunkRow], metrics table[MetricRow], c *Counts) error {
	r, err := trace.Open(in.Path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	label := in.Label
	if label == "" {
		label = h.Label
	}
	// The label and phase names are repeated on every row: a hand-made
	// trace's megabyte label would make gigabytes of chunks. Replay never
	// writes one longer than MaxName.
	label = safetext.Cut(label, safetext.MaxName)
	start, _ := time.Parse(time.RFC3339Nano, h.StartWall)
	phases := map[int]trace.Phase{}
	for _, p := range h.Phases {
		p.Name = safetext.Cut(p.Name, safetext.MaxName)
		phases[p.Index] = p
	}
	acc := a.Trace(label, in.Path, h)
	var rb []RequestRow
	var cb []ChunkRow
	r.IncludeScrapes()
	var mb []MetricRow
	for r.Scan() {
		if sc := r.Scrape(); sc != nil {
			t := start.Add(time.Duration(sc.T)).UTC()
			src, target, serr := strings.Clone(sc.Source), strings.Clone(sc.Target), strings.Clone(sc.Error)
			if len(sc.Samples) == 0 {
				mb = append(mb, MetricRow{Label: label, TNs: sc.T, T: t, Source: src, Target: target, Value: nan, Error: serr})
			}
			for _, smp := range sc.Samples {
				mb = append(mb, MetricRow{Label: label, TNs: sc.T, T: t, Source: src, Target: target,
					Name: strings.Clone(smp.Name), Labels: strings.Clone(smp.Labels), Value: smp.Value, Error: serr})
			}
			if len(mb) >= batch {
				if err := metrics.Write(mb); err != nil {
					return err
				}
				c.Metrics += int64(len(mb))
				mb = mb[:0]
			}
			continue
		}
		rec := r.Record()
		// The analysis' own reading of the request: the row's times,
		// tokens and speeds are the ones its tables take.
		m := acc.AddRow(rec)
		ph := phases[rec.Phase]
		// A record's strings are slices of one string holding its whole
		// body (text included): rows keep copies, or the requests table,
		// held by the Parquet writer until its row group is full, pins
		// every body of the trace (2.2 GB on a 10 M-token trace).
		id := strings.Clone(rec.ID)
		row := RequestRow{
			Label: label, RequestID: id, Index: int64(rec.Index), Phase: int64(rec.Phase), PhaseName: ph.Name,
			Concurrency: int64(ph.Concurrency), Repeat: int64(ph.Repeat), Warmup: rec.Warmup,
			InputTokens: int64(m.InputTokens), NewInputTokens: int64(rec.InputTokens), CachedTokens: -1, MaxTokens: int64(rec.MaxTokens),
			OutputTokens: int64(m.OutputTokens), OutputSource: m.OutputTokensSource,
			ScheduledNs: rec.Scheduled, SentNs: rec.Sent, HeadersNs: rec.Headers, FirstNs: m.FirstNs, LastNs: m.LastNs, DoneNs: rec.Done,
			Sent: start.Add(time.Duration(rec.Sent)).UTC(), Status: int64(rec.Status), OK: rec.Error == nil,
			FinishReason: strings.Clone(rec.FinishReason), Chunks: int64(len(rec.Chunks)),
			TTFTMs: ms(m.TTFTS), TPOTMs: ms(m.TPOTS), E2EMs: ms(m.E2ES), PerStreamTPS: orNaN(m.PerStreamTPS),
			ServerNewInputTokens: int64(rec.ServerPromptTokens), ServerTextTokens: int64(rec.ServerTextTokens),
			Session: rec.Session, Turn: int64(rec.Turn), SentInputTokens: int64(rec.SentInputTokens),
			UserDelayMeanNs: rec.UserDelayMean, UserDelayMaxNs: rec.UserDelayMax,
		}
		if m.CachedTokens != nil {
			row.CachedTokens = int64(*m.CachedTokens)
		}
		if rec.Error != nil {
			row.ErrorClass = string(rec.Error.Class)
		}
		for i, ch := range rec.Chunks {
			row.Bytes += int64(ch.Bytes)
			cb = append(cb, ChunkRow{Label: label, RequestID: id, Phase: int64(rec.Phase), Seq: int64(i), TNs: ch.T,
				T: start.Add(time.Duration(ch.T)).UTC(), Bytes: int64(ch.Bytes), Tokens: int64(ch.Tokens), TextBytes: int64(len(ch.Text))})
		}
		rb = append(rb, row)
		if len(rb) >= batch {
			if err := reqs.Write(rb); err != nil {
				return err
			}
			c.Requests += int64(len(rb))
			rb = rb[:0]
		}
		if len(cb) >= batch {
			if err := chunks.Write(cb); err != nil {
				return err
			}
			c.Chunks += int64(len(cb))
			cb = cb[:0]
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	acc.SetTruncated(r.Truncated())
	if err := reqs.Write(rb); err != nil {
		return err
	}
	c.Requests += int64(len(rb))
	if err := chunks.Write(cb); err != nil {
		return err
	}
	c.Chunks += int64(len(cb))
	if err := metrics.Write(mb); err != nil {
		return err
	}
	c.Metrics += int64(len(mb))
	return nil
}
