package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Limits of one scrape. vLLM's /metrics is tens of KiB (a few hundred
// series, histograms included); 4 MiB is a hundred times that and still a
// small allocation every interval.
const (
	MaxBody = 4 << 20
	// DefaultInterval is how often a run scrapes: often enough that the
	// concurrency sweep's bursts (about a second each on the simulator's
	// default profile) get readings of their own, rarely enough that a
	// large /metrics costs the trace little (names repeat from scrape to
	// scrape and compress away; values change).
	DefaultInterval = 250 * time.Millisecond
	// MinInterval bounds --server-metrics-interval from below: scraping
	// faster measures the scraping.
	MinInterval = 50 * time.Millisecond
)

// Scraper reads one /metrics endpoint.
type Scraper struct {
	// Client sends the scrapes: its own, so scrapes never take a
	// connection the measured requests would use.
	Client *http.Client
	// URL is the endpoint; Target is what the trace records for it
	// (credentials and query values removed).
	URL, Target string
	// Timeout bounds one scrape; it should be shorter than the interval
	// so a slow endpoint costs one reading, not a pile-up.
	Timeout time.Duration
	// Header is added to every scrape (the run's --header and key).
	Header http.Header
	// Redact, when set, removes secrets from a scrape before Scrape
	// returns it: a server may name the caller's key in a label value, a
	// metric name or a message it sends (a gateway counting requests per
	// key does), and a scrape is stored in the trace.
	Redact func(*trace.Scrape)
}

// NewClient is a client for scrapes: one connection kept alive, no proxy
// from the environment, no redirects (a redirect to a login page is a
// failed scrape, said as such).
func NewClient(insecure bool) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
		TLSClientConfig:     tlsConfig(insecure),
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Scrape reads the endpoint once. now is the run clock (ns since the run
// start). It never fails: a scrape that did not work is returned with
// Error saying why and no samples.
func (s *Scraper) Scrape(ctx context.Context, now func() int64) trace.Scrape {
	out := trace.Scrape{Source: trace.SourceMetrics, Target: s.Target, T: now()}
	samples, err := s.fetch(ctx)
	out.Duration = now() - out.T
	if err != nil {
		out.Error = err.Error()
	} else {
		if len(samples) > trace.MaxScrapeSamples {
			out.Dropped = len(samples) - trace.MaxScrapeSamples
			samples = samples[:trace.MaxScrapeSamples]
		}
		out.Samples = samples
	}
	if s.Redact != nil {
		s.Redact(&out)
	}
	return out
}

func (s *Scraper) fetch(ctx context.Context) ([]trace.Sample, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot build the request: %s", oneLine(err.Error()))
	}
	for k, vs := range s.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	// Text first: expfmt parses the text format, and OpenMetrics through
	// the small conversion in Parse.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1")
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, s.netError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		msg := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if resp.StatusCode == http.StatusNotFound {
			msg += " (the server has no /metrics there; llama.cpp needs --metrics)"
		}
		return nil, errors.New(msg)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, s.netError(ctx, err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("the answer is over the %d MiB limit of a scrape: not kept", MaxBody>>20)
	}
	return Parse(body, resp.Header.Get("Content-Type"))
}

func (s *Scraper) netError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within %v (the scrape timeout)", s.Timeout)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return errors.New("the run ended during the scrape")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return errors.New(oneLine(err.Error()))
}

// Target strips what must not reach a file from a /metrics URL: the user
// and password, and query values.
func Target(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"REDACTED"}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment = ""
	return strings.TrimSpace(u.String())
}
