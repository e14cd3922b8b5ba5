// Package inspect is what `llmreplay trace info` and `trace cat` show of a
// trace: the header and the counts of records, failures, chunks, scrapes
// and clock readings (Info), and the records and scrapes as JSON lines.
//
// It reads traces only (trace), names the engine behind a scrape
// (servermetrics) and escapes every text a server put in the file
// (internal/safetext); it never measures a metric, which is analyze's.
package inspect

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

// Info is one trace summed up: its header, the counts of its records
// (trace.Stats), of each source's scrapes, and how far the wall clock
// moved against the run's clock.
type Info struct {
	Path         string
	Size         int64 // bytes of the file; -1 for standard input
	Major, Minor int
	Header       trace.Header
	Stats        *trace.Stats
	// Sources are the scrapes' sources in order of first appearance, each
	// counted in Scrapes (the client's clock readings apart).
	Sources []string
	Scrapes map[string]*ScrapeCount
	// ClockMoved is the wall clock against the run clock at the last of
	// ClockReadings readings.
	ClockMoved    time.Duration
	ClockReadings int
	// Truncated: the file ends in a cut-short tail; Skipped entries could
	// not be read (FirstSkip the first's error). The counts cover every
	// other record.
	Truncated bool
	Skipped   int
	FirstSkip error
	// Progress is the last progress entry a cut-short 1.6 trace holds
	// (how many requests had been sent by then), when HasProgress.
	Progress    trace.Progress
	HasProgress bool
}

// Read scans r (opened from path; "-" is standard input) to its end,
// scrapes included. r.Err says whether the scan stopped on corruption.
func Read(r *trace.Reader, path string) *Info {
	i := &Info{Path: path, Size: -1, Header: r.Header(), Stats: trace.NewStats(), Scrapes: map[string]*ScrapeCount{}}
	i.Major, i.Minor = r.Version()
	if st, err := os.Stat(path); err == nil && path != "-" {
		i.Size = st.Size()
	}
	r.IncludeScrapes()
	for r.Scan() {
		s := r.Scrape()
		switch {
		case s == nil:
			i.Stats.Add(r.Record())
		case s.Source == trace.SourceClock:
			for _, smp := range s.Samples {
				if smp.Name == trace.ClockOffsetSample && smp.Value > -9e18 && smp.Value < 9e18 {
					i.ClockMoved, i.ClockReadings = time.Duration(smp.Value), i.ClockReadings+1
				}
			}
		default:
			k := i.Scrapes[s.Source]
			if k == nil {
				k = &ScrapeCount{Target: s.Target, engines: map[string]bool{}}
				i.Scrapes[s.Source] = k
				i.Sources = append(i.Sources, s.Source)
			}
			k.Add(s)
		}
	}
	i.Truncated = r.Truncated()
	i.Skipped, i.FirstSkip = r.Skipped()
	i.Progress, i.HasProgress = r.Progress()
	return i
}

// WriteText writes the info as `trace info` prints it: one "name: value"
// line each, every text from the file escaped.
func (i *Info) WriteText(w io.Writer) {
	c, h := i.Stats, i.Header
	line := func(name, format string, a ...any) {
		// Everything here comes from a file a server's answers filled
		// (model id, finish reasons, messages): escaped, never raw.
		fmt.Fprintf(w, "%-11s %s\n", name+":", safetext.Show(fmt.Sprintf(format, a...)))
	}
	line("trace", "%s", i.Path)
	file := fmt.Sprintf("format %d.%d, written by llmreplay %s", i.Major, i.Minor, h.ToolVersion)
	if i.Size >= 0 {
		file = fmt.Sprintf("%s, %s", FormatBytes(i.Size), file)
		if c.TextChunks > 0 {
			file += fmt.Sprintf("; %.2f bytes per text chunk", float64(i.Size)/float64(c.TextChunks))
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
	i.writeClocks(line)
	i.writeSetup(line)
	i.writeCounts(line)
}

// writeClocks writes where the times come from and how the clocks behaved.
func (i *Info) writeClocks(line func(name, format string, a ...any)) {
	c, h := i.Stats, i.Header
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
	if i.ClockReadings > 1 {
		line("clock", "the wall clock moved %v against the run clock by the end (analyze warns of a step)", i.ClockMoved)
	}
}

// writeSetup writes the host, the shards, the options and the phases.
func (i *Info) writeSetup(line func(name, format string, a ...any)) {
	c, h := i.Stats, i.Header
	host := fmt.Sprintf("%s/%s, %s, %d cores, %s", h.Host.OS, h.Host.Arch, h.Host.CPU, h.Host.Cores, h.Host.GoVersion)
	if h.Host.Hostname != "" {
		host += ", " + h.Host.Hostname
	}
	line("host", "%s", host)
	if s := h.Shard; s != nil {
		desc := fmt.Sprintf("%d/%d, clock %s", s.Index, s.Count, s.Clock.Describe())
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
				c.PerShard[s.Index], s.Host, s.StartWall, time.Duration(s.OffsetNs), s.Clock.Describe(), s.File)
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
}

// writeCounts writes the records by outcome, what is missing, the chunks,
// the text, the time span, the scrapes and what could not be read.
func (i *Info) writeCounts(line func(name, format string, a ...any)) {
	c, h := i.Stats, i.Header
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
	if planned, m := i.Planned(); planned > 0 && h.Shard == nil && len(h.ShardsMissing) == 0 {
		if m < planned && i.Truncated && i.HasProgress && i.Progress.Sent >= 0 {
			line("partial", "%s", trace.CutSummary(int64(m), int64(c.Records-c.Warmup), int64(planned), i.Progress.Sent, i.Progress.T))
		} else if m < planned && i.Truncated {
			line("partial", "cut off after %d of %d requests (the run crashed or is still running): %d missing", m, planned, planned-m)
		} else if m < planned {
			line("partial", "stopped after %d of %d requests: %d never sent", m, planned, planned-m)
		}
	}
	line("chunks", "%d (%d with text, %d with reasoning; %s on the wire)", c.Chunks, c.TextChunks, c.ReasoningChunks, FormatBytes(c.WireBytes))
	line("text", "%s of output text, %s of reasoning", FormatBytes(c.TextBytes), FormatBytes(c.ReasoningBytes))
	if c.Records > 0 {
		line("time span", "%v (first send at %v, last response done at %v after the start)",
			time.Duration(c.Last-c.First).Round(time.Microsecond), time.Duration(c.First).Round(time.Microsecond), time.Duration(c.Last).Round(time.Microsecond))
	}
	for _, src := range i.Sources {
		name := "metrics"
		if src == trace.SourceProcess {
			name = "process"
		}
		line(name, "%s", i.Scrapes[src].String())
	}
	if i.Truncated {
		line("note", "the trace ends in a cut-short tail (the run was killed, or is still running); the counts cover every record before it")
	}
	if i.Skipped > 0 {
		line("damaged", "%s could not be read and skipped (the first: %v); the counts cover every other record", Entries(i.Skipped), i.FirstSkip)
	}
}

// Planned is Σ requests of the header's phases, and how many of them the
// trace holds (per phase, at most the phase's planned count).
func (i *Info) Planned() (planned, recorded int) {
	for _, p := range i.Header.Phases {
		planned += p.Requests
		recorded += min(i.Stats.PerPhase[p.Index], p.Requests)
	}
	return planned, recorded
}

// ScrapeCount sums up one source's scrapes.
type ScrapeCount struct {
	N, Failed, Samples int
	Target, FirstErr   string
	First, Last        int64 // the first and last scrape's times
	engines            map[string]bool
}

// Add counts one scrape of the source.
func (k *ScrapeCount) Add(s *trace.Scrape) {
	if k.N == 0 {
		k.First = s.T
	}
	k.N++
	k.Last = s.T
	if s.Error != "" {
		k.Failed++
		if k.FirstErr == "" {
			k.FirstErr = s.Error
		}
		return
	}
	k.Samples += len(s.Samples)
	if e := servermetrics.Read(s).Engine; e != "" {
		k.engines[e] = true
	}
}

// String says how many scrapes of what, how often, how many samples, the
// engines whose metric names they held, and how many failed.
func (k *ScrapeCount) String() string {
	ok := k.N - k.Failed
	desc := fmt.Sprintf("%d scrapes of %s", k.N, k.Target)
	if k.N > 1 {
		desc += fmt.Sprintf(", one every %v", (time.Duration(k.Last-k.First) / time.Duration(k.N-1)).Round(time.Millisecond))
	}
	if ok > 0 {
		desc += fmt.Sprintf(", %d samples each on average", k.Samples/ok)
	}
	if len(k.engines) > 0 {
		names := make([]string, 0, len(k.engines))
		for e := range k.engines {
			names = append(names, e)
		}
		slices.Sort(names)
		desc += ", names of " + strings.Join(names, ", ")
	}
	if k.Failed > 0 {
		desc += fmt.Sprintf("; %d failed (the first: %s)", k.Failed, k.FirstErr)
	}
	return desc
}

// FormatBytes writes a size: "512 B", "1.5 KiB", "2.00 MiB", "1.00 GiB".
func FormatBytes(n int64) string {
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

// Entries is "1 entry", "3 entries".
func Entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
