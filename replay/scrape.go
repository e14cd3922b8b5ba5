package replay

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
)

// Server-metrics settings (Config.ServerMetrics).
const (
	ServerMetricsAuto = "auto"
	ServerMetricsOff  = "off"
)

// ServerMetricsStatus is what a run says once about its /metrics scraping
// (Config.OnServerMetrics): whether it scrapes, where, and why not.
type ServerMetricsStatus struct {
	On       bool
	Target   string // the endpoint, without credentials or query values
	Interval time.Duration
	// Why is the first scrape's failure when On is false under auto.
	Why string
}

// String is the line the CLI prints.
func (s ServerMetricsStatus) String() string {
	if s.On {
		return fmt.Sprintf("server metrics: scraping %s every %v into the trace", s.Target, s.Interval)
	}
	return fmt.Sprintf("server metrics: none at %s (%s); the run goes on without them", s.Target, s.Why)
}

// ScrapeSink is a Sink that also takes the run's scrapes (the trace file).
// Scrape is called from the scraping goroutine, possibly while Record runs
// on the sink goroutine: implementations must allow that.
type ScrapeSink interface {
	Scrape(s *trace.Scrape) error
}

// Scrape writes one scrape into the trace.
func (t *TraceFile) Scrape(s *trace.Scrape) error {
	if t.w == nil {
		return nil
	}
	return t.w.WriteScrape(s)
}

func (s sinks) Scrape(sc *trace.Scrape) error {
	var first error
	for _, k := range s {
		if ss, ok := k.(ScrapeSink); ok {
			if err := ss.Scrape(sc); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// resolveServerMetrics checks ServerMetrics and its interval and returns
// the endpoint to scrape ("" for none) and whether it was found by auto.
func resolveServerMetrics(c *Config, base string) (endpoint string, auto bool, err error) {
	if c.ServerMetricsInterval < 0 {
		return "", false, fieldErr("ServerMetricsInterval", "is negative", "give a duration like 500ms")
	}
	if c.ServerMetricsInterval == 0 {
		c.ServerMetricsInterval = servermetrics.DefaultInterval
	}
	if c.ServerMetricsInterval < servermetrics.MinInterval {
		return "", false, fieldErr("ServerMetricsInterval", fmt.Sprintf("%v is below %v", c.ServerMetricsInterval, servermetrics.MinInterval), "scrape less often: faster would measure the scraping")
	}
	switch v := strings.TrimSpace(c.ServerMetrics); v {
	case "", ServerMetricsOff:
		c.ServerMetrics = ServerMetricsOff
		return "", false, nil
	case ServerMetricsAuto:
		b := base
		if i := strings.IndexByte(b, '?'); i >= 0 {
			b = b[:i]
		}
		return strings.TrimRight(b, "/") + "/metrics", true, nil
	default:
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", false, fieldErr("ServerMetrics", fmt.Sprintf("%q is not auto, off or an http(s) address", servermetrics.Target(v)), "give e.g. http://127.0.0.1:8000/metrics")
		}
		return v, false, nil
	}
}

// newScraper is the run's scraper, nil when scraping is off. The run's
// --header values go only to the server's own host. The API key is never
// sent: engines serve /metrics without one (vLLM's key guards /v1 only),
// and each API carries its key its own way (a bearer token, Anthropic's
// x-api-key), which a scrape cannot know; an endpoint that wants
// credentials gets them in its URL or a --header.
func (e *engine) newScraper(r *Resolved) *servermetrics.Scraper {
	if r.metricsURL == "" {
		return nil
	}
	s := &servermetrics.Scraper{
		Client: servermetrics.NewClient(e.cfg.Insecure),
		URL:    r.metricsURL,
		Target: servermetrics.Target(r.metricsURL),
		// The loop is sequential (the next scrape is timed from the end
		// of the last, see scrapeLoop), so a slow endpoint costs readings,
		// never a pile-up; the timeout is the interval's share, but at
		// least a second, so a loaded client machine (or a /metrics that
		// takes a few hundred ms to render) still gets its readings.
		Timeout: e.scrapeTimeout(),
		Redact:  func(sc *trace.Scrape) { redactScrape(sc, e.redactSecrets) },
	}
	mu, err1 := url.Parse(r.metricsURL)
	bu, err2 := url.Parse(r.base)
	if err1 == nil && err2 == nil && mu.Host == bu.Host {
		s.Header = e.cfg.Headers.Clone()
	}
	return s
}

// scrapeLoop calls scrape every interval until stop closes, writing each
// scrape to the sinks. It runs on its own goroutine, so a slow endpoint
// never delays a send or a read: the timing path shares nothing with it
// but the trace writer's lock, which the record goroutine takes too.
//
// A costly endpoint (a huge /metrics to parse, a slow server) spaces the
// readings out to 10× the shortest of the last three, so scraping never
// holds more than a tenth of the run's time (and of one core) for long: a
// hostile endpoint cannot starve the timing loop of CPU. The shortest, not
// the last: one reading a busy machine stalled says nothing about the
// endpoint, and spacing the next out to 10× such a stall left whole
// concurrency levels of a bench without a reading.
func (e *engine) scrapeLoop(scrape func(context.Context) trace.Scrape, last time.Duration, snk sinks, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	interval := e.cfg.ServerMetricsInterval
	// last is what the reading before the run took. It joins the three,
	// but spaces out the loop's first reading on its own only when it
	// took longer than a loop reading may (timeout): it opened the
	// connection and had seconds for it (firstScrapeTimeout), so below
	// that one more reading, bounded by the timeout, tells the endpoint's
	// cost from the dial's and the machine's.
	recent := scrapeTimes{last}
	first := max(interval-last, 0)
	if last > e.scrapeTimeout() {
		first = scrapeBackoff * last
	}
	t := time.NewTimer(first)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			start := time.Now()
			sc := scrape(ctx)
			if ctx.Err() != nil {
				return // the run ended during the scrape: not a server failure
			}
			if err := snk.Scrape(&sc); err != nil {
				return // the trace is failing: the record path reports it
			}
			took := time.Since(start)
			recent.add(took)
			t.Reset(max(interval-took, scrapeBackoff*recent.shortest()))
		}
	}
}

// scrapeTimes are the durations of the last readings, at most
// scrapeWindow of them, oldest first.
type scrapeTimes []time.Duration

// scrapeWindow is how many recent readings judge an endpoint's cost.
const scrapeWindow = 3

func (s *scrapeTimes) add(d time.Duration) {
	if len(*s) == scrapeWindow {
		*s = append((*s)[:0], (*s)[1:]...)
	}
	*s = append(*s, d)
}

func (s scrapeTimes) shortest() time.Duration { return slices.Min(s) }

// scrapeTimeout is what one reading of the loop may take.
func (e *engine) scrapeTimeout() time.Duration {
	return max(e.cfg.ServerMetricsInterval*4/5, minScrapeTimeout)
}

// minScrapeTimeout is the least a periodic scrape gets (see newScraper).
const minScrapeTimeout = time.Second

// firstScrapeTimeout bounds the first scrape, which under auto decides
// whether the run scrapes at all.
const firstScrapeTimeout = 5 * time.Second

// scrapeBackoff is how many times its own duration a scrape waits before
// the next (see scrapeLoop).
const scrapeBackoff = 10

// scrapers are the run's periodic readings: the server's /metrics and a
// watched process, each on its goroutine, each read once more after the
// last response so counters cover the whole run.
type scrapers struct {
	fns  []func(context.Context) trace.Scrape
	stop chan struct{}
	done []chan struct{}
}

// reader is one periodic reading and what its reading before the run
// took (its duration on the run clock).
type reader struct {
	fn    func(context.Context) trace.Scrape
	first int64
}

func (e *engine) startScrapers(snk sinks, readers ...reader) *scrapers {
	s := &scrapers{stop: make(chan struct{})}
	for _, r := range readers {
		if r.fn == nil {
			continue
		}
		d := make(chan struct{})
		s.fns, s.done = append(s.fns, r.fn), append(s.done, d)
		go e.scrapeLoop(r.fn, time.Duration(r.first), snk, s.stop, d)
	}
	return s
}

// finish stops the loops and takes the last readings.
func (s *scrapers) finish(snk sinks, timeout time.Duration, stopped func()) {
	close(s.stop)
	for _, d := range s.done {
		<-d
	}
	stopped() // the loops are done: the readers may be changed now
	for _, f := range s.fns {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		sc := f(c)
		cancel()
		snk.Scrape(&sc)
	}
}
