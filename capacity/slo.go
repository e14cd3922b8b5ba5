// Package capacity finds the largest load (closed-loop users or open-loop
// request rate) a server sustains while a latency SLO holds, with an
// interval for that answer. It owns only the search: what a probe is (a
// phase of one replay) is the caller's, handed in as a Prober, so the
// search is tested against a model whose true answer is known in closed
// form, and data still flows one way (workload → replay → trace → here).
package capacity

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/analyze/claim"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Term is one bound of an SLO: the q-quantile of a per-request time metric
// must stay at or below Bound milliseconds; or, for a Share term
// (goodput>=95%), the share of requests that succeed within the goodput
// bounds (the caller's per-request SLO, Sample.Good) must be at least
// Bound, a fraction.
type Term struct {
	Text   string  // as written
	Metric string  // base metric name, e.g. "ttft"; "goodput" for a Share term
	Q      float64 // quantile, e.g. 0.9 for _p90
	Bound  float64 // milliseconds, or a fraction for a Share term
	Share  bool
	// Strict: the bound itself fails (written < or >, not <= or >=). It
	// is judged and echoed as written.
	Strict bool
}

// within says v meets the term's bound; beyond says v lies on its wrong
// side. A NaN is neither: it decides nothing.
func (t Term) within(v float64) bool {
	switch {
	case t.Share && t.Strict:
		return v > t.Bound
	case t.Share:
		return v >= t.Bound
	case t.Strict:
		return v < t.Bound
	}
	return v <= t.Bound
}

func (t Term) beyond(v float64) bool {
	return !math.IsNaN(v) && !t.within(v)
}

// op is the term's comparison as written.
func (t Term) op() string {
	o := "<"
	if t.Share {
		o = ">"
	}
	if !t.Strict {
		o += "="
	}
	return o
}

// Metrics a probe measures per request (what a Sample's Values hold).
var Metrics = []string{"ttft", "tpot", "e2e"}

var goodputRE = regexp.MustCompile(`^goodput\s*(>=|>|<=|<|=)\s*([^%]*?)\s*(%?)$`)

func parseGoodput(part string) (Term, error) {
	m := goodputRE.FindStringSubmatch(part)
	if m == nil {
		return Term{}, fmt.Errorf("SLO term %q: write the goodput bound as goodput>=95%%", part)
	}
	if m[1] != ">=" && m[1] != ">" {
		// The suggestion repeats the user's number only when it is one: a
		// raw capture could carry a newline into a one-line error.
		n := "95"
		if _, err := strconv.ParseFloat(m[2], 64); err == nil {
			n = m[2]
		}
		return Term{}, fmt.Errorf("SLO term %q: a goodput bound is a lower limit: write goodput>=%s%%", part, n)
	}
	if m[3] != "%" {
		return Term{}, fmt.Errorf("SLO term %q: goodput in an SLO is the share of requests within the goodput bounds, in percent: write goodput>=95%%", part)
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil || !(v > 0 && v < 100) {
		return Term{}, fmt.Errorf("SLO term %q: give a share above 0%% and below 100%% (100%% can never be shown by a finite sample)", part)
	}
	return Term{Text: part, Metric: "goodput", Bound: v / 100, Share: true, Strict: m[1] == ">"}, nil
}

// SLO is a conjunction of terms: a load meets it when every term holds.
type SLO []Term

// ParseSLO reads "ttft_p90<=2s,tpot_p90<=50ms" with the claim language's
// metric names and units (a bare number is milliseconds).
func ParseSLO(s string) (SLO, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty SLO: give bounds like 'ttft_p90<=2s,tpot_p90<=50ms'")
	}
	var out SLO
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "goodput") {
			t, err := parseGoodput(part)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			continue
		}
		if part == "" {
			return nil, fmt.Errorf("SLO %q has an empty term: write terms like 'ttft_p90<=2s,tpot_p90<=50ms', one comma between them", s)
		}
		c, err := claim.ParseClaim(part)
		if err != nil {
			return nil, termError(part, c.Metric, err)
		}
		if len(c.Selector) > 0 {
			return nil, fmt.Errorf("SLO term %q: drop the {…} selector, the search chooses the load itself", part)
		}
		m, stat, _ := analyze.LookupMetric(c.Metric)
		if !m.IsTimeUnit() || m.Scope == analyze.PerRun || m.Scope == analyze.Count {
			return nil, fmt.Errorf("SLO term %q: %s is not a per-request latency; use ttft, tpot, e2e or itl with a percentile, e.g. ttft_p90<=1s", part, m.Name)
		}
		if !slices.Contains(Metrics, m.Name) {
			return nil, fmt.Errorf("SLO term %q: a probe measures %s per request, not %s; use one of them with a percentile, e.g. ttft_p90<=1s", part, strings.Join(Metrics, ", "), m.Name)
		}
		q, ok := percentile(stat)
		if !ok {
			return nil, fmt.Errorf("SLO term %q: give a percentile such as %s_p90 (a tail the interval can bound), not %q", part, m.Name, c.Metric)
		}
		if c.Op != "<=" && c.Op != "<" {
			return nil, fmt.Errorf("SLO term %q: a latency bound is an upper limit: write %s<=%s", part, c.Metric, strings.TrimSpace(part[strings.IndexAny(part, "<>=")+len(c.Op):]))
		}
		if c.Bound <= 0 {
			return nil, fmt.Errorf("SLO term %q: the bound must be positive", part)
		}
		out = append(out, Term{Text: part, Metric: m.Name, Q: q, Bound: c.Bound, Strict: c.Op == "<"})
	}
	return out, nil
}

// termError words the claim parser's error for an SLO term. An unknown
// metric is named with what an SLO takes: the parser's own fix points at
// every metric the analysis knows, most of which a probe does not measure.
func termError(part, metric string, err error) error {
	if fe := fielderr.As(err); fe != nil && fe.Field == "Metric" {
		names := strings.Join(Metrics[:len(Metrics)-1], ", ") + " or " + Metrics[len(Metrics)-1]
		return fmt.Errorf("SLO term %q: there is no metric %q: use %s at a percentile (e.g. ttft_p90<=1s), or goodput>=P%%", part, metric, names)
	}
	var pe *claim.ParseError
	if errors.As(err, &pe) {
		err = pe.Err // the term is named here already
	}
	return fmt.Errorf("SLO term %q: %w", part, err)
}

// percentile is the quantile of a percentile statistic, any _pX the
// analysis reads (p95, p99.9).
func percentile(stat string) (float64, bool) { return analyze.ParsePercentile(stat) }

// Scaled returns the SLO with every bound multiplied by f: a simulator run
// at time scale f is judged against bounds scaled alike.
func (s SLO) Scaled(f float64) SLO {
	out := make(SLO, len(s))
	for i, t := range s {
		if !t.Share {
			t.Bound *= f
		}
		out[i] = t
	}
	return out
}
