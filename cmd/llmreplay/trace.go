package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Inspect trace files: header and counts, or every record as JSON",
		Long: `Inspect the NAME.trace.zst files that replay writes.

  info  the header (server, workload, host) and counts of records, failures and chunks
  cat   one JSON object per request, chunks included, for jq; --requests: its metrics
  merge the traces of a run sent from several machines (replay --shard), as one

Use - as TRACE to read standard input. docs/TRACE_FORMAT.md describes the file byte by byte.`,
		Example: `  llmreplay trace info run.trace.zst
  llmreplay trace cat --no-chunks run.trace.zst | jq -c 'select(.error) | {id, error}'`,
		Args: cobra.ArbitraryArgs,
		RunE: needsSubcommand,
	}
	cmd.AddCommand(newTraceInfoCmd(), newTraceCatCmd(), newTraceMergeCmd())
	return cmd
}

// openTrace opens path ("-" is standard input). A file that cannot be read
// as a trace is bad input: exit status 2.
func openTrace(cmd *cobra.Command, path string) (*trace.Reader, error) {
	var (
		r   *trace.Reader
		err error
	)
	if path == "-" {
		r, err = trace.NewReader(cmd.InOrStdin())
	} else {
		r, err = trace.Open(path)
	}
	if err != nil {
		return nil, usageError(err)
	}
	return r, nil
}

// finishScan turns how a scan ended into the note and the error the user
// sees: a cut-short tail is a note (a killed run leaves one), corruption
// is an error.
func finishScan(cmd *cobra.Command, path string, r *trace.Reader) error {
	if r.Truncated() {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s ends in a cut-short tail (the run was killed, or is still running); every record before it was read\n", path)
	}
	if n, first := r.Skipped(); n > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is damaged: %s could not be read and skipped (the first: %s); every other record was read\n",
			path, entries(n), safetext.Show(first.Error()))
	}
	if err := r.Err(); err != nil {
		return usageError(err)
	}
	return nil
}

// entries is "1 entry", "3 entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

func needTraces(args []string) error {
	if len(args) == 0 {
		return usagef("name a trace file, e.g. 'run.trace.zst' (or - for standard input)")
	}
	return nil
}

func newTraceInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "info TRACE...",
		Short:   "Print a trace's header and counts of records, failures, chunks and text",
		Example: "  llmreplay trace info run.trace.zst",
		Args:    func(_ *cobra.Command, args []string) error { return needTraces(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			for i, path := range args {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := traceInfo(cmd, path); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func traceInfo(cmd *cobra.Command, path string) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	c := trace.NewStats()
	sc := map[string]*scrapeCount{}
	var sources []string
	r.IncludeScrapes()
	var clockMoved int64 // the wall clock against the run clock, at the last reading
	clockReadings := 0
	for r.Scan() {
		if s := r.Scrape(); s != nil {
			if s.Source == trace.SourceClock {
				for _, smp := range s.Samples {
					if smp.Name == trace.ClockOffsetSample && smp.Value > -9e18 && smp.Value < 9e18 {
						clockMoved, clockReadings = int64(smp.Value), clockReadings+1
					}
				}
				continue
			}
			k := sc[s.Source]
			if k == nil {
				k = &scrapeCount{target: s.Target, engines: map[string]bool{}}
				sc[s.Source] = k
				sources = append(sources, s.Source)
			}
			k.add(s)
			continue
		}
		c.Add(r.Record())
	}

	w := cmd.OutOrStdout()
	h := r.Header()
	major, minor := r.Version()
	line := func(name, format string, a ...any) {
		// Everything here comes from a file a server's answers filled
		// (model id, finish reasons, messages): escaped, never raw.
		fmt.Fprintf(w, "%-11s %s\n", name+":", safetext.Show(fmt.Sprintf(format, a...)))
	}
	line("trace", "%s", path)
	file := fmt.Sprintf("format %d.%d, written by llmreplay %s", major, minor, h.ToolVersion)
	if st, err := os.Stat(path); err == nil && path != "-" {
		file = fmt.Sprintf("%s, %s", formatBytes(st.Size()), file)
		if c.TextChunks > 0 {
			file += fmt.Sprintf("; %.2f bytes per text chunk", float64(st.Size())/float64(c.TextChunks))
		}
	}
	line("file", "%s", file)
	line("label", "%s", h.Label)
	server := fmt.Sprintf("%s  api=%s  model=%s", h.URL, h.API, h.Model)
	if h.Simulated {
		server += fmt.Sprintf("  (simulated, profile %s)", h.SimProfile)
	}
	line("server", "%s", server)
	line("workload", "%s  tokenizer=%s  shape=%s", h.WorkloadDigest, h.Tokenizer, h.Shape)
	salt := "off"
	if h.Salt {
		salt = fmt.Sprintf("seed %d", h.SaltSeed)
	}
	line("salt", "%s", salt)
	line("started", "%s", h.StartWall)
	switch h.Timestamps {
	case trace.TimestampsKernel:
		beside := "each request's mean and largest client delay beside them"
		if c.KeptChunkTimes > 0 {
			beside = "each chunk's user-space time beside them"
		}
		line("timestamps", "kernel: chunk and header times are the kernel's receive stamps (%s)", beside)
		if c.DelayRecords > 0 {
			line("read delay", "the client read events %v after their kernel stamp on average, %v at most (%d requests)",
				time.Duration(c.DelayMean()).Round(100*time.Nanosecond), time.Duration(c.DelayMax).Round(100*time.Nanosecond), c.DelayRecords)
		}
		if c.ReadLate > 0 {
			line("read late", "%d of %d text chunks in %d requests, the worst by up to %v: read together with a later chunk of their stream, or after its next chunk had arrived (analyze: client_fell_behind)",
				c.ReadLate, c.ContentChunks, c.ReadLateRecords, time.Duration(c.ReadLateMax).Round(time.Microsecond))
		}
		if c.Ends > 0 {
			src := "the kernel stamp of the read that ended the response"
			if h.TimeSource(trace.FieldDone) != trace.TimestampsKernel {
				src = "when the client saw the response end (user space, format 1.5 and older)"
			}
			line("ends", "a response's end came %v after its last chunk on average, %v at most (%d responses; the end is %s)",
				time.Duration(c.EndMean()).Round(100*time.Nanosecond), time.Duration(c.EndMax).Round(100*time.Nanosecond), c.Ends, src)
		}
	case trace.TimestampsUser:
		if h.TimestampsNote != "" {
			line("timestamps", "user: %s", h.TimestampsNote)
		} else {
			line("timestamps", "user")
		}
	}
	if clockReadings > 1 {
		line("clock", "the wall clock moved %v against the run clock by the end (analyze warns of a step)", time.Duration(clockMoved))
	}
	host := fmt.Sprintf("%s/%s, %s, %d cores, %s", h.Host.OS, h.Host.Arch, h.Host.CPU, h.Host.Cores, h.Host.GoVersion)
	if h.Host.Hostname != "" {
		host += ", " + h.Host.Hostname
	}
	line("host", "%s", host)
	if s := h.Shard; s != nil {
		desc := fmt.Sprintf("%d/%d, clock %s", s.Index, s.Count, clockDesc(s.Clock))
		if s.StartAt != "" {
			desc += fmt.Sprintf(", common start %s (this shard %v late)", s.StartAt, time.Duration(s.StartLateNs).Round(time.Microsecond))
		}
		line("shard", "%s", desc)
	}
	if len(h.Shards) > 0 {
		desc := fmt.Sprintf("%d merged of %d", len(h.Shards), h.Shards[0].Count)
		if len(h.ShardsMissing) > 0 {
			desc += fmt.Sprintf(", missing %v", h.ShardsMissing)
		}
		line("shards", "%s", desc)
		for _, s := range h.Shards {
			line(fmt.Sprintf("  shard %d", s.Index), "%d records, host %s, started %s (+%v on this trace's clock), clock %s, from %s",
				c.PerShard[s.Index], s.Host, s.StartWall, time.Duration(s.OffsetNs), clockDesc(s.Clock), s.File)
		}
	}
	if len(h.Options) > 0 {
		keys := make([]string, 0, len(h.Options))
		for k := range h.Options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		opts := make([]string, len(keys))
		for i, k := range keys {
			opts[i] = k + "=" + h.Options[k]
		}
		// --api auto's choice is a sentence, not a setting: its own line.
		if why, ok := h.Options["api_auto"]; ok {
			line("api", "%s, chosen by --api auto: %s", h.API, why)
			opts = slices.DeleteFunc(opts, func(o string) bool { return strings.HasPrefix(o, "api_auto=") })
		}
		// So is what became of the server's tokenizer (--server-tokenize).
		if st, ok := h.Options["server_tokenize"]; ok {
			if p := h.Options["server_tokenize_prompts"]; p != "" {
				st += ", prompts counted: " + p
			}
			line("tokenize", "the server's /tokenize: %s", st)
			opts = slices.DeleteFunc(opts, func(o string) bool { return strings.HasPrefix(o, "server_tokenize") })
		}
		line("options", "%s", strings.Join(opts, " "))
	}
	for _, p := range h.Phases {
		desc := fmt.Sprintf("%d %s: %s", p.Index, p.Name, p.Kind)
		if p.Rate > 0 {
			desc += fmt.Sprintf(", %g req/s", p.Rate)
		} else {
			desc += fmt.Sprintf(", concurrency %d", p.Concurrency)
		}
		desc += fmt.Sprintf(", %d input / %d max tokens, %d of %d requests in this trace", p.InputTokens, p.MaxTokens, c.PerPhase[p.Index], p.Requests)
		line("phase", "%s", desc)
	}

	// A conversation's turns never sent after an earlier one failed
	// (trace 1.4) are neither ok nor failures: they are said apart.
	notSent := c.Failed[trace.ErrNotSent]
	failed := c.Records - c.OK - notSent
	rec := fmt.Sprintf("%d (%d ok, %d failed", c.Records, c.OK, failed)
	if failed > 0 {
		classes := make([]trace.ErrorClass, 0, len(c.Failed))
		for k := range c.Failed {
			if k != trace.ErrNotSent {
				classes = append(classes, k)
			}
		}
		slices.SortFunc(classes, func(a, b trace.ErrorClass) int {
			return cmp.Or(c.Failed[b]-c.Failed[a], strings.Compare(string(a), string(b)))
		})
		parts := make([]string, len(classes))
		for i, k := range classes {
			parts[i] = fmt.Sprintf("%d %s", c.Failed[k], k)
		}
		rec += ": " + strings.Join(parts, ", ")
	}
	if notSent > 0 {
		rec += fmt.Sprintf(", %d not sent: an earlier turn of their session failed", notSent)
	}
	rec += ")"
	if c.Warmup > 0 {
		rec += fmt.Sprintf(", %d of them warm-up", c.Warmup)
	}
	line("records", "%s", rec)
	// The same plain-words statement analyze's partial_trace warning makes
	// (a shard holds its share by design, so it is not judged).
	if planned, m := plannedRequests(h, c); planned > 0 && h.Shard == nil && len(h.ShardsMissing) == 0 {
		p, ok := r.Progress()
		if m < planned && r.Truncated() && ok && p.Sent >= 0 {
			line("partial", "%s", trace.CutSummary(int64(m), int64(c.Records-c.Warmup), int64(planned), p.Sent, p.T))
		} else if m < planned && r.Truncated() {
			line("partial", "cut off after %d of %d requests (the run crashed or is still running): %d missing", m, planned, planned-m)
		} else if m < planned {
			line("partial", "stopped after %d of %d requests: %d never sent", m, planned, planned-m)
		}
	}
	line("chunks", "%d (%d with text, %d with reasoning; %s on the wire)", c.Chunks, c.TextChunks, c.ReasoningChunks, formatBytes(c.WireBytes))
	line("text", "%s of output text, %s of reasoning", formatBytes(c.TextBytes), formatBytes(c.ReasoningBytes))
	if c.Records > 0 {
		line("time span", "%v (first send at %v, last response done at %v after the start)",
			time.Duration(c.Last-c.First).Round(time.Microsecond), time.Duration(c.First).Round(time.Microsecond), time.Duration(c.Last).Round(time.Microsecond))
	}
	for _, src := range sources {
		name := "metrics"
		if src == trace.SourceProcess {
			name = "process"
		}
		line(name, "%s", sc[src].String())
	}
	if r.Truncated() {
		line("note", "the trace ends in a cut-short tail (the run was killed, or is still running); the counts cover every record before it")
	}
	if n, first := r.Skipped(); n > 0 {
		line("damaged", "%s could not be read and skipped (the first: %v); the counts cover every other record", entries(n), first)
	}
	if err := r.Err(); err != nil {
		return usageError(err)
	}
	return nil
}

// scrapeCount sums up one source's scrapes for trace info.
type scrapeCount struct {
	n, failed, samples int
	firstErr, target   string
	first, last        int64
	engines            map[string]bool
}

func (k *scrapeCount) add(s *trace.Scrape) {
	if k.n == 0 {
		k.first = s.T
	}
	k.n++
	k.last = s.T
	if s.Error != "" {
		k.failed++
		if k.firstErr == "" {
			k.firstErr = s.Error
		}
		return
	}
	k.samples += len(s.Samples)
	if e := servermetrics.Read(s).Engine; e != "" {
		k.engines[e] = true
	}
}

func (k *scrapeCount) String() string {
	ok := k.n - k.failed
	desc := fmt.Sprintf("%d scrapes of %s", k.n, k.target)
	if k.n > 1 {
		desc += fmt.Sprintf(", one every %v", (time.Duration(k.last-k.first) / time.Duration(k.n-1)).Round(time.Millisecond))
	}
	if ok > 0 {
		desc += fmt.Sprintf(", %d samples each on average", k.samples/ok)
	}
	if len(k.engines) > 0 {
		names := make([]string, 0, len(k.engines))
		for e := range k.engines {
			names = append(names, e)
		}
		slices.Sort(names)
		desc += ", names of " + strings.Join(names, ", ")
	}
	if k.failed > 0 {
		desc += fmt.Sprintf("; %d failed (the first: %s)", k.failed, k.firstErr)
	}
	return desc
}

// plannedRequests is Σ requests of the header's phases, and how many of
// them the trace holds (per phase, at most the phase's planned count).
func plannedRequests(h trace.Header, c *trace.Stats) (planned, recorded int) {
	for _, p := range h.Phases {
		planned += p.Requests
		recorded += min(c.PerPhase[p.Index], p.Requests)
	}
	return planned, recorded
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// recordNoChunks is a record as cat --no-chunks prints it: the chunks key
// is left out (the outer field hides the embedded one) and their number
// given instead.
type recordNoChunks struct {
	*trace.Record
	Chunks     *struct{} `json:"chunks,omitempty"`
	ChunkCount int       `json:"chunk_count"`
}

func newTraceCatCmd() *cobra.Command {
	var (
		noChunks    bool
		requests    bool
		scrapes     bool
		definitions string
	)
	cmd := &cobra.Command{
		Use:   "cat TRACE...",
		Short: "Print every record as one JSON object per line, for jq; --requests prints each request's metrics",
		Long: `Print every record as one JSON object per line (JSON Lines), with the
field names of the trace format (times in nanoseconds since the run start).
Usage and timings are the server's own JSON, kept as strings: use jq's
fromjson to open them.

With --requests, print each request's metrics instead, one JSON object per
line: label, id, index, phase, concurrency, repeat, ok, status, sent_s,
lateness_s, ttft_s, e2e_s, tpot_s, input_tokens, output_tokens (and their
source), per_stream_tps, chunks, finish_reason, error_class and
error_message (the server's own words). They are computed as analyze
computes them (docs/METRICS.md, "Per-request rows"): the median of the ok
rows' per_stream_tps is analyze's per-stream figure.`,
		Example: `  llmreplay trace cat run.trace.zst | jq -c '{id, ttft_ms: ((.chunks[0].t_ns - .sent_ns) / 1e6)}'
  llmreplay trace cat --no-chunks run.trace.zst | jq -r 'select(.error) | .error.class' | sort | uniq -c

  # per-request metrics; the slowest first tokens
  llmreplay trace cat --requests run.trace.zst | jq -c 'select(.ttft_s > 1) | {phase, ttft_s, error_class}'`,
		Args: func(_ *cobra.Command, args []string) error { return needTraces(args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if requests && noChunks {
				return usagef("--requests and --no-chunks print different things: give one")
			}
			if scrapes && (requests || noChunks) {
				return usagef("--server-metrics prints the scrapes, not the records: give it without --requests and --no-chunks")
			}
			if cmd.Flags().Changed("definitions") && !requests {
				return usagef("--definitions applies to --requests only")
			}
			if _, err := analyze.LookupDefinitions(definitions); err != nil {
				return flagError(usageError(err))
			}
			bw := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
			// Records hold the server's own strings, exact for jq; the
			// bidirectional and C1 controls among them are written as \u
			// escapes (same value when decoded), so the lines cannot be
			// reordered on a terminal (encoding/json escapes C0 itself).
			enc := json.NewEncoder(safetext.JSONWriter(bw))
			enc.SetEscapeHTML(false)
			for _, path := range args {
				var err error
				switch {
				case scrapes:
					err = traceScrapes(cmd, path, enc)
				case requests:
					err = traceRequests(cmd, path, enc, definitions)
				default:
					err = traceCat(cmd, path, enc, noChunks)
				}
				if err != nil {
					bw.Flush()
					return err
				}
			}
			return bw.Flush()
		},
	}
	cmd.Flags().BoolVar(&noChunks, "no-chunks", false, "leave out the chunks (print chunk_count instead)")
	cmd.Flags().BoolVar(&scrapes, "server-metrics", false, "print the scrapes of the server's /metrics (and of a watched process) the run took, one JSON object per line (t_ns, duration_ns, source, target, error, samples), instead of the records; the client's own clock readings are summed up by trace info")
	cmd.Flags().BoolVar(&requests, "requests", false, "print each request's metrics (TTFT, E2E, tokens, per-stream tok/s, error) instead of its record")
	cmd.Flags().StringVar(&definitions, "definitions", analyze.DefaultDefinitions,
		"with --requests: compute per-stream tok/s and TPOT the way a tool does: "+strings.Join(analyze.DefinitionNames(), "|"))
	return cmd
}

var emptyChunks = []trace.Chunk{}

func traceCat(cmd *cobra.Command, path string, enc *json.Encoder, noChunks bool) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	for r.Scan() {
		rec := r.Record()
		var v any = rec
		if noChunks {
			v = recordNoChunks{Record: rec, ChunkCount: len(rec.Chunks)}
		} else if rec.Chunks == nil {
			// [] rather than null, so jq's .chunks[] and length just work.
			rec.Chunks = emptyChunks
		}
		if err := enc.Encode(v); err != nil {
			return writeError(err)
		}
	}
	return finishScan(cmd, path, r)
}

// traceScrapes prints the trace's scrapes (1.3), one JSON object each.
func traceScrapes(cmd *cobra.Command, path string, enc *json.Encoder) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	r.IncludeScrapes()
	for r.Scan() {
		s := r.Scrape()
		// The client's own clock readings (1.4) are not the server's or a
		// process's metrics: trace info reports them, with the step check.
		if s == nil || s.Source == trace.SourceClock {
			continue
		}
		if s.Samples == nil {
			s.Samples = emptySamples
		}
		if err := enc.Encode(s); err != nil {
			return writeError(err)
		}
	}
	return finishScan(cmd, path, r)
}

var emptySamples = []trace.Sample{}

// traceRequests prints one analyze.RequestRow per record. A trace without
// a label of its own is labelled by its file name, as analyze does.
func traceRequests(cmd *cobra.Command, path string, enc *json.Encoder, definitions string) error {
	r, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer r.Close()
	label := ""
	if r.Header().Label == "" {
		label = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".zst"), ".trace")
	}
	l, err := analyze.NewRequestLister(label, r.Header(), definitions)
	if err != nil {
		return usageError(err)
	}
	if why := l.TokenizerFallback(); why != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: the trace's tokenizer could not be loaded (%s); output tokens without server counts are chunk counts (output_tokens_source \"chunks\")\n",
			path, safetext.Show(why))
	}
	for r.Scan() {
		row := l.Row(r.Record())
		if err := enc.Encode(&row); err != nil {
			return writeError(err)
		}
	}
	return finishScan(cmd, path, r)
}

// writeError reports a failure to write the output (a closed pipe, a full
// disk): not bad input, so exit status 1.
func writeError(err error) error { return fmt.Errorf("writing the output: %w", err) }

// clockDesc says how far a shard's wall clock could be trusted.
func clockDesc(c trace.Clock) string {
	switch {
	case c.Source == "":
		return "error unknown (the OS gave no estimate)"
	case !c.Synced:
		return "not synchronised (" + c.Source + ")"
	default:
		return fmt.Sprintf("synchronised, estimated error %v, maximum %v (%s)", time.Duration(c.EstErrorNs), time.Duration(c.MaxErrorNs), c.Source)
	}
}
