package replay

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

// Announce makes the run say on w, once and before it starts, what
// --api auto chose, whether the server's /metrics is scraped, and what a
// watched process (WatchPID) is sampled for. Text from the server is
// escaped.
func (c *Config) Announce(w io.Writer) {
	c.AnnounceAPI(w)
	c.OnDispatcher = func(policy, refused string) { fmt.Fprintln(w, DispatcherLine(policy, refused)) }
	c.OnServerMetrics = func(s ServerMetricsStatus) { fmt.Fprintln(w, safetext.Show(s.String())) }
	every := c.ServerMetricsInterval
	if every == 0 {
		every = servermetrics.DefaultInterval
	}
	c.OnWatch = func(target string, gpu bool) {
		gpuText := "no GPU memory (nvidia-smi not found)"
		if gpu {
			gpuText = "GPU memory from nvidia-smi"
		}
		fmt.Fprintln(w, safetext.Show(fmt.Sprintf("watching %s: memory, CPU time and threads every %v into the trace; %s", target, every, gpuText)))
	}
}

// DispatcherLine is the one line that says which scheduling policy the
// dispatcher's thread got, and why not a better one.
func DispatcherLine(policy, refused string) string {
	line := "dispatcher thread: " + policy
	switch {
	case policy == PolicyFIFO:
	case refused != "":
		line += " (not permitted: " + refused + ")"
	}
	if policy != PolicyFIFO && policy != PolicyRR && refused != "" {
		line += "; a realtime policy needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0"
	}
	return line
}

// AnnounceAPI makes the run say on w what --api auto chose, before it
// starts.
func (c *Config) AnnounceAPI(w io.Writer) {
	c.OnAPI = func(d Detection) { fmt.Fprintf(w, "api: %s, chosen by --api auto: %s\n", d.API, d.Why) }
}

// WriteText writes the summary line, what came of the server's
// tokenizer, and the trace's path, one a line.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s\nserver tokenizer: %s\ntrace: %s\n", s, safetext.Show(s.TokenizeLine()), s.Trace)
}

// NoneSucceeded is the error of a run that sent requests and had not one
// succeed: such a run measured nothing. nil otherwise.
func (s *Summary) NoneSucceeded() error {
	if s.Sent == 0 || s.OK > 0 {
		return nil
	}
	if s.ByClass[trace.ErrRefused] == s.Sent {
		// Not one connection: the server is not there, whatever else.
		return fmt.Errorf("none of the %d requests succeeded: every connection was refused, so no server listens at the address given: start the server, or correct --url; the trace %s holds their errors", s.Sent, s.Trace)
	}
	main, n := "", 0
	for c, k := range s.ByClass {
		if k > n || (k == n && string(c) < main) {
			main, n = string(c), k
		}
	}
	return fmt.Errorf("none of the %d requests succeeded (%d failed with %s): the trace %s holds their errors; `llmreplay trace cat` shows them", s.Sent, n, main, s.Trace)
}

// LateStart is how late past its start time (Config.StartAt) a run may
// start unremarked: the wake-up at the start time itself can be a few
// milliseconds late on a busy machine. trace merge calls a shard late
// from the same second.
const LateStart = time.Second

// Notes is a sink that watches a run for what the person running it must
// hear but the summary line does not say: a start time that had passed
// when the run started (said at the start, on W), and failed /metrics
// scrapes (said by ScrapeWarning at the end). A scrape failure is
// otherwise only in the trace: an endpoint given by URL that never
// answers would leave the run without its server-side view, silently.
type Notes struct {
	W io.Writer
	// StartAt is the start time asked for (zero: none); StartIn the wait
	// it was given as, when it was (--start-in), to name it as given.
	StartAt time.Time
	StartIn time.Duration

	mu              sync.Mutex // Scrape runs on the scraping goroutine
	scrapes, failed int
	target, lastErr string
	// answered counts the successful measured responses with text,
	// whole those that came as one chunk (notStreamed).
	answered, whole int
}

// notStreamedBytes is the least text a one-chunk response must hold to be
// called not streamed: a one- or two-token answer fits in one chunk on
// any server.
const notStreamedBytes = 16

// notStreamed says the response's text came in one chunk: a server that
// ignored "stream": true or held its output back to the end, whose TTFT
// is the whole response's time.
func notStreamed(rec *trace.Record) (answered, whole bool) {
	if rec.Warmup || rec.Error != nil {
		return false, false
	}
	chunks, bytes := 0, 0
	for i := range rec.Chunks {
		if n := len(rec.Chunks[i].Text) + len(rec.Chunks[i].Reasoning); n > 0 {
			chunks++
			bytes += n
		}
	}
	return chunks > 0, chunks == 1 && bytes >= notStreamedBytes
}

// Start says when the run starts later than StartAt (a wait given as
// StartIn passes too when finding the model takes longer). The header's
// start is the engine's own, taken after the wait (and after model
// discovery), so a start time that passed during discovery counts too.
func (n *Notes) Start(h trace.Header) error {
	if n.StartAt.IsZero() {
		return nil
	}
	start, err := time.Parse(time.RFC3339Nano, h.StartWall)
	if err != nil {
		return nil // no start to compare: the header says what it says
	}
	if late := start.Sub(n.StartAt); late > LateStart {
		round := 10 * time.Millisecond
		if late > time.Minute {
			round = time.Second
		}
		// Named as the user gave it.
		at := n.StartAt.UTC().Format("2006-01-02T15:04:05.999Z07:00")
		what := "--start-at " + at
		if n.StartIn > 0 {
			what = fmt.Sprintf("the start time %s (--start-in %v)", at, n.StartIn)
		}
		fmt.Fprintf(n.W, "warning: %s passed %v ago: this run starts now, that much behind any shard that started on time (its trace records how late)\n",
			what, late.Round(round))
	}
	return nil
}

// Record counts the responses that came in one piece.
func (n *Notes) Record(rec *trace.Record) error {
	answered, whole := notStreamed(rec)
	n.mu.Lock()
	defer n.mu.Unlock()
	if answered {
		n.answered++
	}
	if whole {
		n.whole++
	}
	return nil
}

func (n *Notes) Close() error { return nil }

// Scrape counts the /metrics scrapes and keeps the last failure's error.
func (n *Notes) Scrape(s *trace.Scrape) error {
	if s.Source != trace.SourceMetrics {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.scrapes++
	if s.Error != "" {
		n.failed++
		n.target, n.lastErr = s.Target, s.Error
	}
	return nil
}

// Warnings writes, at the end of the run, one line on W for responses
// that came in one piece, not streamed, and one for failed scrapes. The
// run does not fail: its requests were measured all the same.
func (n *Notes) Warnings() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.whole > 0 {
		fmt.Fprintf(n.W, "warning: %d of %d responses came in one piece, not streamed: their TTFT is the whole response's time and their per-stream speed means nothing; the server ignored \"stream\": true or held its output back (analyze calls them not_streamed)\n",
			n.whole, n.answered)
	}
	if n.failed == 0 {
		return
	}
	var msg string
	if n.failed == n.scrapes {
		msg = fmt.Sprintf("warning: server metrics: all %d scrapes of %s failed (last: %s): the trace has no server-side view of the run (queue, running requests, KV cache); check --server-metrics",
			n.failed, n.target, n.lastErr)
	} else {
		msg = fmt.Sprintf("warning: server metrics: %d of %d scrapes of %s failed (last: %s): the trace's server-side view of the run has gaps",
			n.failed, n.scrapes, n.target, n.lastErr)
	}
	// The error and target come from the network: escaped, one line.
	fmt.Fprintln(n.W, safetext.Show(msg))
}

var _ ScrapeSink = (*Notes)(nil)
