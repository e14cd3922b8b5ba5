// Package replay sends a workload to a server exactly as scheduled and hands
// every finished request, with each streamed chunk's arrival time, to the
// trace writer. It computes no metric: analysis happens offline, from the
// trace, in package analyze.
//
// Timing rules (see ARCHITECTURE.md): all times are integer nanoseconds on
// the monotonic clock since the run start; open-loop requests are sent at
// absolute deadlines (sleep, then spin for the last stretch), never after
// relative sleeps, so lateness cannot accumulate; both the scheduled and the
// actual send time are recorded, so a late client cannot hide server
// queueing.
package replay

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/procwatch"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// Summary counts what happened in a run.
type Summary struct {
	Trace   string
	Sent    int // measured requests sent
	OK      int
	Failed  int
	ByClass map[trace.ErrorClass]int
	NotSent int // requests never sent because the run was stopped
	// Retried counts requests sent again on a new connection because the
	// server had closed the kept-alive one before answering (retry.go).
	Retried int
	// SessionNotSent counts turns of conversations never sent because
	// an earlier turn of theirs failed (recorded as not-sent).
	SessionNotSent int
	Warmup         int
	Elapsed        time.Duration
	Stopped        bool // the run was interrupted
	SaltSeed       int64
	Model          string
	// ServerTokenize is what came of asking the server's tokenizer (the
	// trace header's server_tokenize option): the flavour used, "off", or
	// why it was not available. PromptsCounted of PromptsDistinct prompts,
	// and TextsCounted responses, got a count; TextsUnavailable were asked
	// and got none; TextsSkipped were not asked (the counts fell behind).
	ServerTokenize                  string
	PromptsCounted, PromptsDistinct int
	TextsCounted, TextsUnavailable  int
	TextsSkipped                    int
	// Dispatch is where the open-loop dispatcher's waits ended (rate and
	// log-replay phases, summed over them).
	Dispatch DispatchStats
	// DispatchPolicy is the scheduling policy the dispatcher's thread got
	// (PolicyFIFO … PolicyNormal; "" when the run had no rate or
	// log-replay phase), DispatchRefused why the better ones were refused.
	DispatchPolicy, DispatchRefused string
	// ReleaseWrites counts the requests whose bytes their release wrote
	// itself (dispatch_held.go): a burst's, one after another, and an
	// open-loop request's, by the dispatcher at its due time; the others
	// were sent by their own goroutines (TLS, no --prewarm, a connection
	// not ready at the release).
	ReleaseWrites int
}

// String is the one-line summary printed at the end of a run.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests sent, %d ok, %d failed", s.Sent, s.OK, s.Failed)
	if len(s.ByClass) > 0 {
		classes := make([]string, 0, len(s.ByClass))
		for c := range s.ByClass {
			classes = append(classes, string(c))
		}
		sort.Strings(classes)
		b.WriteString(" (")
		for i, c := range classes {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", c, s.ByClass[trace.ErrorClass(c)])
		}
		b.WriteString(")")
	}
	if s.Retried > 0 {
		fmt.Fprintf(&b, ", %d retried on a new connection (the server had closed the kept-alive one before answering)", s.Retried)
	}
	if s.NotSent > 0 {
		fmt.Fprintf(&b, ", %d not sent (stopped)", s.NotSent)
	}
	if s.SessionNotSent > 0 {
		fmt.Fprintf(&b, ", %d turns not sent (an earlier turn of their session failed)", s.SessionNotSent)
	}
	fmt.Fprintf(&b, " in %.1fs", s.Elapsed.Seconds())
	return b.String()
}

// engine is the state of one run.
type engine struct {
	cfg Config
	// kernel: chunk times are kernel receive stamps (Config.Timestamps);
	// timestampsNote says why auto chose user-space ones.
	kernel         bool
	timestampsNote string
	ep             endpoint.Endpoint
	base           string
	opts           endpoint.Options
	// querySecrets are the URL's query values, redacted like the key.
	querySecrets []string
	// redactSecrets are the key and querySecrets, for every record.
	redactSecrets []string
	// detected is what --api auto found (nil when --api named the API).
	detected *Detection
	// watcher samples --watch-pid's process (nil: none).
	watcher *procwatch.Watcher
	// disp is the thread the open-loop dispatcher runs on (nil:
	// the run has none of those phases).
	disp *dispatchThread
	// metricsStatus is what became of --server-metrics (nil: off).
	metricsStatus *ServerMetricsStatus
	tok           tokenize.Tokenizer // for SendTokenIDs
	// sessTok counts the answers a conversation resends (nil: no
	// sessions); sessionHeader carries a session's id ("" for none).
	sessTok       tokenize.Tokenizer
	sessionHeader string
	client        *http.Client
	retry         retrier // the client of retries (retry.go)
	start         time.Time
	startUnix     int64
	salt          []string // measured requests
	warmSalt      []string // warm-up requests: different words, so they cannot warm the cache

	// The server's tokenizer (servertok.go): nil when off or unavailable.
	stok         *serverTok
	promptCounts map[int]int  // request index → server prompt count
	tokq         chan tokItem // responses waiting for a text count
	tokWG        sync.WaitGroup

	reqCtx   context.Context // cancelled Grace after the run's ctx
	records  chan *trace.Record
	mu       sync.Mutex
	sum      Summary
	inflight sync.WaitGroup
	stopped  atomic.Bool
	// sent counts the measured requests whose send has begun, for the
	// trace's progress entries (a kill leaves no record of those in
	// flight).
	sent atomic.Int64
}

// progress is the run clock and the measured requests sent so far, read
// by the trace writer at every flush.
func (e *engine) progress() (t, sent int64) { return e.now(), e.sent.Load() }

// now is the run clock: monotonic nanoseconds since the start.
func (e *engine) now() int64 { return int64(time.Since(e.start)) }

// Run replays cfg.Workload and writes the trace. It returns an error only
// when the run could not happen at all (bad config, unwritable trace);
// failed requests are data, counted in the Summary.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	r, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	return run(ctx, r)
}

// run is a run of a resolved Config. It cannot see the caller's Config:
// a setting read here has had its default and its check applied exactly
// once, in Resolve (the first version read a flush interval and an API key
// from the caller's copy, which had neither default nor URL key applied).
func run(ctx context.Context, r *Resolved) (*Summary, error) {
	cfg := r.Config
	e := newEngine(r)
	defer e.client.CloseIdleConnections()
	if e.ep == nil {
		d, err := detectAPI(ctx, e.client, e.base, cfg.APIKey, cfg.Workload.Header.Shape, e.scrub)
		if err != nil {
			return nil, err
		}
		if e.ep, err = endpoint.Lookup(d.API); err != nil {
			return nil, err
		}
		e.detected = &d
		if cfg.OnAPI != nil {
			cfg.OnAPI(d)
		}
	}
	if e.opts.Model == "" {
		m, err := discoverModel(ctx, e.client, e.base, e.ep.Name(), cfg.APIKey, e.scrub)
		if err != nil {
			return nil, err
		}
		e.opts.Model = m
	}
	e.sum.Model = e.opts.Model
	// A workload that this API cannot carry (a chat workload to a raw
	// prompt API, say) fails every request the same way: say so once,
	// before anything is sent, instead of recording N identical failures.
	first := cfg.Workload.Requests[0]
	if _, err := e.ep.NewRequest(ctx, e.base, &first, e.opts); err != nil {
		return nil, err
	}

	e.sum.ServerTokenize = ServerTokenizeOff
	if cfg.ServerTokenize != ServerTokenizeOff {
		e.startServerTokenize(ctx)
		if e.stok != nil {
			defer e.stok.client.CloseIdleConnections()
		}
	}

	if !cfg.StartAt.IsZero() {
		if err := e.waitStart(ctx, cfg.StartAt); err != nil {
			return nil, err
		}
	}
	// The first scrape, before the header: under auto it decides whether
	// the run scrapes at all, and the header says which.
	scraper := e.newScraper(r)
	var firstScrape *trace.Scrape
	if scraper != nil {
		// Under auto the first answer decides the whole run: it gets
		// seconds, not the interval's share, so a busy machine or a slow
		// first /metrics (an engine still warming up) does not switch
		// scraping off for good.
		regular := scraper.Timeout
		scraper.Timeout = max(regular, firstScrapeTimeout)
		sc := scraper.Scrape(ctx, e.now)
		scraper.Timeout = regular
		st := ServerMetricsStatus{On: true, Target: scraper.Target, Interval: cfg.ServerMetricsInterval}
		if sc.Error != "" && r.metricsAuto {
			st.On, st.Why = false, sc.Error
			scraper = nil
		} else {
			firstScrape = &sc
		}
		e.metricsStatus = &st
		if cfg.OnServerMetrics != nil {
			cfg.OnServerMetrics(st)
		}
	}
	if needsDispatcher(cfg.Workload) {
		steps := policySteps()
		if cfg.NormalPriority {
			steps = nil
		}
		e.disp = startDispatchThread(steps, threadID)
		defer e.disp.stop()
		e.sum.DispatchPolicy, e.sum.DispatchRefused = e.disp.Policy, e.disp.Refused
		if cfg.OnDispatcher != nil {
			cfg.OnDispatcher(e.disp.Policy, e.disp.Refused)
		}
	}
	h := e.header()
	for _, s := range r.sink {
		if tf, ok := s.(*TraceFile); ok {
			tf.progress = e.progress
		}
	}
	if err := r.sink.Start(h); err != nil {
		return nil, err
	}
	r.sink.Scrape(e.clockScrape())
	var metrics, watch reader
	if scraper != nil {
		r.sink.Scrape(firstScrape)
		metrics = reader{func(c context.Context) trace.Scrape { return scraper.Scrape(c, e.now) }, firstScrape.Duration}
	}
	if w := r.watcher; w != nil {
		if cfg.OnWatch != nil {
			cfg.OnWatch(w.Target(), w.GPU())
		}
		first := w.Sample(ctx, e.now)
		r.sink.Scrape(&first)
		watch = reader{func(c context.Context) trace.Scrape { return w.Sample(c, e.now) }, first.Duration}
	}
	scr := e.startScrapers(r.sink, metrics, watch)
	// A sink that cannot take a record (the trace on a full disk) stops the
	// run: requests whose results cannot be recorded would only load the
	// server.
	ctx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	sinkErr := make(chan error, 1)
	go func() {
		var first error
		for rec := range e.records {
			if err := r.sink.Record(rec); err != nil && first == nil {
				first = err
				stopRun()
			}
		}
		sinkErr <- first
	}()

	// In-flight requests outlive a cancelled run by Grace, then are cut.
	reqCtx, cancelReqs := context.WithCancelCause(context.Background())
	defer cancelReqs(errCancelled)
	e.reqCtx = reqCtx
	stopWatch := context.AfterFunc(ctx, func() {
		e.stopped.Store(true)
		time.AfterFunc(cfg.Grace, func() { cancelReqs(errCancelled) })
	})
	defer stopWatch()

	if e.stok != nil {
		e.tokq = make(chan tokItem, tokQueue)
		for i := 0; i < tokTextConc; i++ {
			e.tokWG.Add(1)
			go e.countTexts()
		}
	}
	e.runPhases(ctx)
	e.inflight.Wait()
	if e.tokq != nil {
		close(e.tokq)
		e.tokWG.Wait()
	}
	// One more reading after the last response: counters (preemptions,
	// prefix-cache hits, CPU time) then cover the whole run. Like the
	// first, it gets seconds, not the interval's share: the run's
	// counters depend on it, and nothing is timed any more.
	scr.finish(r.sink, firstScrapeTimeout, func() {
		if scraper != nil {
			scraper.Timeout = max(scraper.Timeout, firstScrapeTimeout)
		}
	})
	r.sink.Scrape(e.clockScrape())
	close(e.records)
	serr := <-sinkErr
	cerr := r.sink.Close()
	e.sum.Elapsed = time.Since(e.start)
	e.sum.Stopped = e.stopped.Load()
	e.sum.Trace = cfg.Trace
	s := e.sum
	if serr != nil {
		return &s, serr
	}
	if cerr != nil {
		return &s, cerr
	}
	return &s, nil
}

var (
	errIdle      = errors.New("idle timeout")
	errTimeout   = errors.New("request timeout")
	errCancelled = errors.New("run stopped")
)

// newEngine prepares the state of one run from a resolved Config.
func newEngine(r *Resolved) *engine {
	cfg := r.Config
	e := &engine{
		cfg:     cfg,
		ep:      r.ep,
		base:    r.base,
		tok:     r.tok,
		sessTok: r.sessTok,
		watcher: r.watcher,
		kernel:  cfg.Timestamps == TimestampsKernel,

		timestampsNote: r.timestampsNote,
		opts:           endpoint.Options{Model: cfg.Model, APIKey: cfg.APIKey, ContinuousUsage: cfg.ContinuousUsage, PromptCache: promptCache(cfg.ServerCache), ExtraBody: cfg.ExtraBody},
		records:        make(chan *trace.Record, 4096),
	}
	if cfg.SessionHeader != SessionHeaderOff && cfg.Workload.HasSessions() {
		e.sessionHeader = cfg.SessionHeader
	}
	e.querySecrets = append(querySecrets(r.base), append(headerSecrets(cfg.Headers), bodySecrets(cfg.ExtraBody)...)...)
	e.redactSecrets = e.secrets()
	if cfg.Salt {
		n := maxSaltWords(cfg.Workload)
		e.salt = workload.SaltWords(cfg.SaltSeed, n)
		e.warmSalt = workload.SaltWords(cfg.SaltSeed^0x5bd1e995, n)
		e.sum.SaltSeed = cfg.SaltSeed
	}
	e.client = newClient(cfg, maxConcurrency(cfg.Workload))
	e.start = time.Now()
	e.startUnix = e.start.UnixNano()
	e.sum.ByClass = map[trace.ErrorClass]int{}
	return e
}

// promptCache is what the endpoint sends for a resolved ServerCache:
// nothing for "default".
func promptCache(setting string) string {
	if setting == "default" {
		return ""
	}
	return setting
}

func maxSaltWords(wl *workload.Workload) int {
	n := 0
	for i := range wl.Requests {
		n = max(n, wl.Requests[i].Salt.Words)
	}
	return n
}

func maxConcurrency(wl *workload.Workload) int {
	n := 1
	for _, p := range wl.Header.Phases {
		n = max(n, p.Concurrency)
	}
	return n
}

// newClient makes an HTTP/1.1 client with one connection per in-flight
// stream, kept alive between requests, and no redirects: a benchmark must
// measure the address it was given.
func newClient(cfg Config, conns int) *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil, // never route benchmark traffic through an environment proxy
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			wc := &watchedConn{Conn: c}
			if cfg.Timestamps == TimestampsKernel {
				wc.k, wc.kwhy = withKernelStamps(c)
			}
			return wc, nil
		},
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(conns, 64),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // compressed SSE would hide per-chunk timing
		ForceAttemptHTTP2:   false,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: cfg.Insecure}, // #nosec G402 -- only with --insecure
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		ReadBufferSize:      32 << 10,
		// A request is written once: 8 KiB holds the headers and a
		// prompt of some 1,500 tokens in one write (a longer body goes
		// past the buffer in its own writes). 32 KiB zeroed per
		// connection was 0.6 µs a chunk at 1,024 paced streams of 100.
		WriteBufferSize: 8 << 10,
	}
	return &http.Client{
		Transport: withHeaders(tr, cfg.Headers),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func (e *engine) header() trace.Header {
	wh := e.cfg.Workload.Header
	h := trace.Header{
		Format:          trace.FormatName,
		Major:           trace.FormatMajor,
		Minor:           trace.FormatMinor,
		ToolVersion:     version.Tool,
		WorkloadDigest:  workload.Digest(e.cfg.Workload),
		Tokenizer:       wh.Tokenizer,
		TokenizerPath:   wh.TokenizerPath,
		TokenizerDigest: wh.TokenizerDigest,
		Shape:           string(wh.Shape),
		Reference:       wh.Task.Reference,
		URL:             RedactURL(e.cfg.URL),
		API:             e.ep.Name(),
		Model:           e.opts.Model,
		Label:           e.cfg.Label,
		Simulated:       e.cfg.Simulated,
		SimProfile:      e.cfg.SimProfile,
		StartWall:       e.start.UTC().Format(time.RFC3339Nano),
		Timestamps:      e.cfg.Timestamps,
		TimestampsNote:  e.timestampsNote,
		TimeSources:     timeSources(e.kernel),
		Host:            hostInfo(),
		Salt:            e.cfg.Salt,
		SaltSeed:        e.cfg.SaltSeed,
		RequestHeaders:  RedactHeaders(e.cfg.Headers, e.redactSecrets...),
		ExtraBody:       RedactBody(e.cfg.ExtraBody, e.redactSecrets...),
		Options: map[string]string{
			"timeout":          e.cfg.Timeout.String(),
			"idle_timeout":     e.cfg.IdleTimeout.String(),
			"warmup":           strconv.Itoa(e.cfg.Warmup),
			"prewarm":          strconv.FormatBool(e.cfg.Prewarm),
			"send_token_ids":   strconv.FormatBool(e.cfg.SendTokenIDs),
			"continuous_usage": strconv.FormatBool(e.cfg.ContinuousUsage),
			"server_cache":     e.cfg.ServerCache,
		},
	}
	if p := wh.Params.Prefix; p != "" {
		// The analysis expects cache hits on a shared prefix sent verbatim.
		h.Options["prefix"] = p
	}
	if b := wh.Params.BlockTokens; b > 0 {
		// A request log's prompts share hash blocks by design (same block,
		// same tokens), so a salted run's prompts may share prefixes with
		// each other: the analysis must not take their hits for a wrong count.
		h.Options["block_tokens"] = strconv.Itoa(b)
	}
	if e.cfg.Workload.HasSessions() {
		h.Options["session_header"] = e.cfg.SessionHeader
	}
	if e.detected != nil {
		h.Options["api_auto"] = e.detected.Why
	}
	if e.disp != nil {
		h.Options[trace.OptDispatcherPolicy] = e.disp.Policy
	}
	h.Options["server_tokenize"] = e.sum.ServerTokenize
	if e.stok != nil {
		h.Options["server_tokenize_prompts"] = fmt.Sprintf("%d of %d", e.sum.PromptsCounted, e.sum.PromptsDistinct)
	}
	if e.cfg.Duration > 0 {
		h.Options["duration"] = e.cfg.Duration.String()
	}
	if w := e.watcher; w != nil {
		h.Options["watch_pid"] = w.Target()
	}
	if st := e.metricsStatus; st != nil {
		h.Options["server_metrics"] = st.Target
		if st.On {
			h.Options["server_metrics_interval"] = st.Interval.String()
		} else {
			h.Options["server_metrics"] += " (not found: " + st.Why + ")"
		}
	}
	if h.Label == "" {
		h.Label = e.opts.Model
	}
	if e.cfg.WorkloadDigest != "" {
		h.WorkloadDigest = e.cfg.WorkloadDigest
	}
	if e.cfg.Shard != nil {
		s := *e.cfg.Shard
		s.Host = h.Host.Hostname
		s.Clock = WallClockError()
		if !e.cfg.StartAt.IsZero() {
			s.StartAt = e.cfg.StartAt.UTC().Format(time.RFC3339Nano)
			s.StartLateNs = max(0, int64(e.start.Sub(e.cfg.StartAt)))
		}
		h.Shard = &s
	}
	for _, p := range wh.Phases {
		h.Phases = append(h.Phases, trace.Phase{
			Index: p.Index, Name: p.Name, Kind: p.Kind, Concurrency: p.Concurrency,
			InputTokens: p.InputTokens, MaxTokens: p.MaxTokens, Repeat: p.Repeat,
			Rate: p.Rate, Requests: p.Requests,
		})
	}
	return h
}

// timeSources names each record time's source: the client's own acts
// (the schedule, the send) are user-space times; what arrives (headers,
// chunks, the response's end) is stamped like the chunks.
func timeSources(kernel bool) map[string]string {
	arrival := trace.TimestampsUser
	if kernel {
		arrival = trace.TimestampsKernel
	}
	return map[string]string{
		trace.FieldScheduled: trace.TimestampsUser, trace.FieldSent: trace.TimestampsUser,
		trace.FieldHeaders: arrival, trace.FieldChunk: arrival, trace.FieldDone: arrival,
	}
}

// waitStart holds the run until the wall clock reaches at, then restarts
// the run clock there. The last 2 ms are waited by waitUntil's precise
// path on the monotonic clock, so shards start within the wake-up error
// of one another plus their clocks' disagreement.
func (e *engine) waitStart(ctx context.Context, at time.Time) error {
	if d := time.Until(at); d > 0 {
		e.start = time.Now()
		if !e.waitUntil(ctx, int64(d)) {
			return fmt.Errorf("stopped while waiting for the start time %s", at.UTC().Format(time.RFC3339))
		}
	}
	e.start = time.Now()
	e.startUnix = e.start.UnixNano()
	return nil
}

// runPhases executes the warm-up and then every phase in order.
func (e *engine) runPhases(ctx context.Context) {
	reqs := e.cfg.Workload.Requests
	warm := reqs
	if e.cfg.Workload.HasSessions() {
		// A later turn alone is a follow-up without its conversation:
		// warm up with first turns.
		warm = warmTurns(reqs)
	}
	for i := 0; i < e.cfg.Warmup && ctx.Err() == nil; i++ {
		r := warm[i%len(warm)]
		p := e.prepare(&r, true)
		e.inflight.Add(1)
		e.do(p, e.now())
	}
	byPhase := map[int][]*workload.Request{}
	for i := range reqs {
		byPhase[reqs[i].Phase] = append(byPhase[reqs[i].Phase], &reqs[i])
	}
	for i, ph := range e.cfg.Workload.Header.Phases {
		rs := byPhase[ph.Index]
		if ctx.Err() != nil {
			e.mu.Lock()
			e.sum.NotSent += len(rs)
			e.mu.Unlock()
			continue
		}
		if e.cfg.OnPhase != nil {
			e.cfg.OnPhase(i, e.cfg.Workload.Header.Phases)
		}
		if c := warmFor(ph, rs); e.cfg.Prewarm && c > 1 {
			e.prewarm(ctx, c)
		}
		kind := phaseKindOf(ph.Kind)
		if ph.Sessions > 0 {
			kind = sessionPhase{}
		}
		kind.run(ctx, e, ph, rs)
	}
}

// warmFor is how many connections to open before a phase: its
// concurrency, but no more than it has requests (a closed phase may have
// more workers than requests); for a rate or log-replay phase, the
// requests scheduled at its first instant (a log that opens with a burst),
// since later ones find the connections earlier ones opened.
func warmFor(ph workload.Phase, rs []*workload.Request) int {
	if phaseKindOf(ph.Kind) != (openPhase{}) || ph.Sessions > 0 {
		return min(ph.Concurrency, len(rs))
	}
	if len(rs) == 0 {
		return 0
	}
	first := rs[0].Offset
	for _, r := range rs {
		first = min(first, r.Offset)
	}
	n := 0
	for _, r := range rs {
		if r.Offset == first {
			n++
		}
	}
	return n
}

// prewarm opens n connections to the server and leaves them idle in the
// pool, so the next phase's requests do not pay for TCP (and TLS) set-up.
// It is best effort: failures show up on the real requests.
func (e *engine) prewarm(ctx context.Context, n int) {
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(c, http.MethodGet, e.base+"/", nil)
			if err != nil {
				return
			}
			resp, err := e.client.Do(req)
			if err != nil {
				return
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}()
	}
	close(gate)
	wg.Wait()
}

// prepared is a request built ahead of its send time, so building the body
// does not delay the send.
type prepared struct {
	rec    *trace.Record
	req    *http.Request
	ctx    context.Context
	cancel context.CancelCauseFunc
	err    error
	// total and idle are stopped timers that cancel ctx with errTimeout
	// and errIdle once started; nil when that timeout is off.
	total *time.Timer
	idle  *idleTimer
	// watch counts the response header bytes and resets idle on each.
	watch *headerWatch
	// conn is the connection the request went out on (kernel stamps), and
	// kfails0 its count of stampless reads then.
	conn    *watchedConn
	kfails0 int64
	// reused: the connection had carried a response before (retry.go).
	reused bool
	// onDone, if set, sees the finished record before it is queued for
	// the writer (a session's next turn needs the answer).
	onDone func(*trace.Record)
	// held, when set, is the request's send by its release
	// (dispatch_held.go).
	held *heldSend
}

func (e *engine) prepare(r *workload.Request, warmup bool) *prepared {
	rec := &trace.Record{
		ID: r.ID, Index: r.Index, Phase: r.Phase, Warmup: warmup,
		InputTokens: r.InputTokens, MaxTokens: r.MaxTokens,
	}
	if !warmup {
		rec.ServerPromptTokens = e.promptCounts[r.Index]
	}
	if k := e.cfg.Workload.Header.Params.SystemTokens; k > 0 && len(r.Messages) > 1 && r.Messages[0].Role == "system" {
		rec.SentInputTokens = k + r.InputTokens // the shared system prompt too
	}
	req := *r
	if e.cfg.Salt {
		if warmup {
			req = req.WithSalt(e.warmSalt)
		} else {
			req = req.WithSalt(e.salt)
		}
	}
	opts := e.opts
	if e.tok != nil {
		opts.TokenIDs = e.tok.Encode(req.Prompt)
	}
	ctx, cancel := context.WithCancelCause(e.reqCtx)
	p := &prepared{rec: rec, ctx: ctx, cancel: cancel}
	p.req, p.err = e.ep.NewRequest(ctx, e.base, &req, opts)
	// The timers are made here, stopped, and only started at the send, so
	// that between a burst's gate opening and the send there is nothing
	// but the timestamp.
	if e.cfg.Timeout > 0 {
		p.total = time.AfterFunc(time.Hour, func() { cancel(errTimeout) })
		p.total.Stop()
	}
	if e.cfg.IdleTimeout > 0 {
		p.idle = newIdleTimer(e.cfg.IdleTimeout, func() { cancel(errIdle) })
	}
	p.watch = &headerWatch{idle: p.idle}
	if p.req != nil {
		p.req = p.req.WithContext(httptrace.WithClientTrace(p.req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) {
				p.watch.attach(i.Conn)
				p.reused = i.Reused
				if e.kernel {
					c := i.Conn
					if tc, ok := c.(*tls.Conn); ok {
						c = tc.NetConn() // kernel stamps are the TCP connection's
					}
					if wc, ok := c.(*watchedConn); ok {
						p.conn = wc
						if wc.k != nil {
							p.kfails0 = wc.k.fails.Load()
						}
					}
				}
				if h := p.held; h != nil {
					h.got(i.Conn) // last: it may wait for the release
				}
			},
		}))
	}
	return p
}

// do sends a prepared request, reads its response into the record and hands
// the record to the writer. It always calls e.inflight.Done.
func (e *engine) do(p *prepared, scheduled int64) {
	defer e.inflight.Done()
	p.rec.Scheduled = scheduled
	defer e.settle(p)
	if p.err != nil {
		p.rec.Sent = e.now()
		e.countSent(p.rec)
		p.rec.Done = p.rec.Sent
		p.rec.Error = &trace.Error{Class: trace.ErrOther, Message: "building the request: " + cleanMessage(p.err)}
		return
	}
	p.rec.Sent = e.now()
	e.countSent(p.rec) // after the send's stamp: nothing comes before it
	e.startTimers(p)
	defer p.stopTimers()
	resp, err := e.send(p) // once more on a new connection when a kept-alive one was closed
	e.receive(p, resp, err)
}

// settle ends a request whose record is complete: its context, a
// session's hook, and the record to the writer.
func (e *engine) settle(p *prepared) {
	p.cancel(nil)
	if p.onDone != nil {
		p.onDone(p.rec)
	}
	e.finish(p.rec)
}

// startTimers starts the request's timeouts at its send; stopTimers stops
// them when it ends.
func (e *engine) startTimers(p *prepared) {
	if p.total != nil {
		p.total.Reset(e.cfg.Timeout)
	}
	if p.idle != nil {
		p.idle.start()
	}
}

func (p *prepared) stopTimers() {
	if p.total != nil {
		p.total.Stop()
	}
	if p.idle != nil {
		p.idle.stop()
	}
}

// receive reads the response of a sent request (resp, or the send's err)
// into its record.
func (e *engine) receive(p *prepared, resp *http.Response, err error) {
	rec := p.rec
	ctx, idle := p.ctx, p.idle
	p.watch.detach()
	if err != nil {
		rec.Done = e.now()
		rec.Error = classify(err, reasonOf(ctx), false)
		if n := p.watch.bytes.Load(); n > 0 && (rec.Error.Class == trace.ErrTimeoutFirst || rec.Error.Class == trace.ErrTimeout) {
			// Bytes came, but not a whole header: say what did arrive.
			rec.Error = &trace.Error{Class: trace.ErrIdleTimeout,
				Message: fmt.Sprintf("the response headers never finished: %d bytes of them arrived, then none within the idle timeout", n)}
			if reasonOf(ctx) == reasonTimeout {
				rec.Error = &trace.Error{Class: trace.ErrTimeout,
					Message: fmt.Sprintf("the response headers never finished within the request timeout: %d bytes of them arrived", n)}
			}
		}
		return
	}
	// Every time of the response is taken by the request's clock, right
	// after a read; its latest is the read the response ended with.
	clk := &reqClock{e: e}
	if e.kernel {
		// Times are taken in user space as ever; the kernel's stamp of
		// each read is logged beside them and replaces them at the end,
		// for the headers, all chunks and the end of the request or none
		// (kts.go).
		switch {
		case p.conn == nil:
			rec.UserTimes = true
			addNote(rec, "user-space timestamps for this request: its connection was not one the client dialed")
		case p.conn.k == nil:
			rec.UserTimes = true
			addNote(rec, "user-space timestamps for this request: "+p.conn.kwhy)
		default:
			clk.k, clk.fails0 = p.conn.k, p.kfails0
			if m := rec.MaxTokens; m > 0 && m <= maxLogPrealloc {
				// One read per chunk at most, and the headers' and
				// the end's: one allocation, not a dozen.
				clk.log = make([]kpair, 0, m+6)
			}
			defer func() { // before finish (deferred earlier, runs later)
				if note := clk.apply(rec); note != "" {
					addNote(rec, note)
				}
			}()
		}
	}
	now := clk.now
	rec.Headers = now()
	rec.Status = resp.StatusCode
	defer resp.Body.Close()
	if idle != nil {
		idle.touch()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		rec.Error = statusError(resp)
		rec.Done = now() // the read that brought the error body's end
		return
	}
	var body io.Reader = resp.Body
	if idle != nil {
		body = &idleReader{r: resp.Body, t: idle}
	}
	err = e.ep.Read(body, now, rec)
	rec.Done = e.now()
	var answered *trace.Error
	if ctx.Err() == nil && (err == nil || errors.As(err, &answered)) {
		// The response ended with a read: [DONE], the body's end, or an
		// event that failed it (malformed, an error object, past its
		// bounds). It ends at that read's time, on the chunks' clock; the
		// time the client took to act on it is its own, not the server's.
		// Cut by the client (a timeout, a stop) or the connection (a
		// reset), it ends when the client saw that.
		rec.Done = clk.prev
	}
	if err != nil || ctx.Err() != nil {
		why := reasonOf(ctx)
		if why == reasonIdle && rec.FinishReason != "" && len(rec.Chunks) > 0 {
			// The API's finish signal arrived and only the stream's close
			// did not: the response is complete. It ended with its last
			// chunk, not when the idle timer gave up on the connection.
			rec.Done = rec.Chunks[len(rec.Chunks)-1].T
			return
		}
		if why != reasonNone {
			// The engine cut the response: say why, not what the cut looked like.
			rec.Error = classify(errors.New("cut"), why, true)
			return
		}
		rec.Error = classify(err, reasonNone, true)
	}
}

// countSent counts a measured request as sent (progress).
func (e *engine) countSent(rec *trace.Record) {
	if !rec.Warmup {
		e.sent.Add(1)
	}
}

// reasonOf says whether the engine itself ended ctx, and why.
func reasonOf(ctx context.Context) reason {
	if ctx.Err() == nil {
		return reasonNone
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errIdle):
		return reasonIdle
	case errors.Is(cause, errTimeout):
		return reasonTimeout
	case errors.Is(cause, errCancelled):
		return reasonCancelled
	}
	return reasonNone
}

// statusError keeps the start of an error response's body: servers explain
// a 400 there (a prompt past the context, a bad model name).
func statusError(resp *http.Response) *trace.Error {
	const keep = 4 << 10
	b, _ := io.ReadAll(io.LimitReader(resp.Body, keep))
	msg := fmt.Sprintf("HTTP %s", resp.Status)
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		msg += " (Retry-After: " + ra + ")"
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		msg += " redirect to " + RedactURL(loc) + ": point the URL at the final address"
	}
	return &trace.Error{Class: trace.ErrHTTPStatus, Message: msg, Body: strings.ToValidUTF8(string(b), "\uFFFD")}
}

// finish converts simulator send times to the run clock, counts the record
// and queues it for the writer.
func (e *engine) finish(rec *trace.Record) {
	for i := range rec.Chunks {
		if st := rec.Chunks[i].ServerT; st != 0 {
			rec.Chunks[i].ServerT = st - e.startUnix
		}
	}
	redactRecord(rec, e.redactSecrets)
	e.mu.Lock()
	switch {
	case rec.Warmup:
		e.sum.Warmup++
	case rec.Error != nil:
		e.sum.Sent++
		e.sum.Failed++
		e.sum.ByClass[rec.Error.Class]++
	default:
		e.sum.Sent++
		e.sum.OK++
	}
	e.mu.Unlock()
	e.queueRecord(rec)
}

// minRedactKey is the shortest key scrubbed from server text: a shorter
// one would match ordinary words and corrupt the record, and is no secret.
const minRedactKey = 8

// idleReader notes every read that returns bytes on the idle timer.
type idleReader struct {
	r io.Reader
	t *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.touch()
	}
	return n, err
}
