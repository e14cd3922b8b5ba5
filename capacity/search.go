package capacity

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
)

// Sample is one measured request of a probe: each SLO metric's value in
// milliseconds (missing = the request did not produce it), and whether it
// succeeded.
type Sample struct {
	OK     bool
	Values map[string]float64
}

// Prober runs one probe: n measured requests at load level x (users for
// the concurrency axis, requests/s for the rate axis) after skipping the
// probe's warm-up, and returns them with the probe's wall time. A real
// prober is a phase of one replay; tests use a model.
type Prober interface {
	Probe(ctx context.Context, x float64, n int) ([]Sample, time.Duration, error)
}

// Config is the search's one resolved configuration.
type Config struct {
	SLO SLO
	// Lo and Hi bound the axis; the search never probes outside them.
	Lo, Hi float64
	// Integer rounds levels (the concurrency axis).
	Integer bool
	// Resolution: the search stops when the pass/fail bracket is this
	// narrow (1 user for concurrency).
	Resolution float64
	// Batch is the requests per probe round; a probe whose interval
	// straddles a bound runs another round, up to MaxRounds.
	Batch     int
	MaxRounds int
	// Conf is each probe's interval level; see docs/CAPACITY.md for why it
	// is above the answer's 95%.
	Conf float64
	// MaxRequests and MaxDuration bound the whole search (0: unbounded).
	MaxRequests int
	MaxDuration time.Duration
	// MaxErrorRate: a probe where more than this share of requests fail
	// stops the search ("errors before the SLO binds").
	MaxErrorRate float64
}

// Defaults used by Resolve.
const (
	DefaultConf         = 0.99
	DefaultMaxRounds    = 4
	DefaultMaxErrorRate = 0.05
)

// Resolve fills defaults and checks the configuration.
func (c Config) Resolve() (Config, error) {
	if len(c.SLO) == 0 {
		return c, fmt.Errorf("capacity: no SLO: give --slo like 'ttft_p90<=1s'")
	}
	if !(c.Lo > 0) || !(c.Hi >= c.Lo) || math.IsInf(c.Hi, 0) {
		return c, fmt.Errorf("capacity: the axis range %g..%g is empty: give a range with 0 < low <= high", c.Lo, c.Hi)
	}
	if c.Integer {
		c.Lo, c.Hi = math.Ceil(c.Lo), math.Floor(c.Hi)
		if c.Hi < c.Lo {
			return c, fmt.Errorf("capacity: the axis range holds no whole number of users")
		}
		c.Resolution = max(1, math.Round(c.Resolution))
	}
	if c.Resolution <= 0 {
		c.Resolution = math.Max(c.Lo/20, 1e-3)
	}
	if c.Conf == 0 {
		c.Conf = DefaultConf
	}
	if c.Conf <= 0.5 || c.Conf >= 1 {
		return c, fmt.Errorf("capacity: probe confidence %g must lie in (0.5, 1)", c.Conf)
	}
	minN := 0
	for _, t := range c.SLO {
		minN = max(minN, MinSamples(t.Q, c.Conf))
	}
	if c.Batch == 0 {
		c.Batch = minN
	}
	if c.Batch < minN {
		return c, fmt.Errorf("capacity: %d requests per probe cannot bound a p%g at %g%% confidence; use at least %d", c.Batch, 100*c.SLO[0].Q, 100*c.Conf, minN)
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.MaxErrorRate == 0 {
		c.MaxErrorRate = DefaultMaxErrorRate
	}
	return c, nil
}

// MinSamples is the fewest samples for which the order-statistic interval
// of the q-quantile at level conf has both ends inside the sample.
func MinSamples(q, conf float64) int {
	for n := int64(2); ; n++ {
		l, h := analyze.OrderCI(n, q, conf)
		if l >= 1 && h <= n {
			return int(n)
		}
	}
}

// Verdict of one probe.
type Verdict string

const (
	Pass      Verdict = "pass"      // every term's interval lies below its bound
	Fail      Verdict = "fail"      // some term's interval lies above its bound
	Undecided Verdict = "undecided" // an interval still straddles its bound after MaxRounds
	Errors    Verdict = "errors"    // too many requests failed
)

// TermResult is one SLO term at one probe.
type TermResult struct {
	Term          string
	Value, Lo, Hi float64 // the quantile and its interval, ms
}

// Probe is one load level as measured.
type Probe struct {
	X        float64
	Requests int
	Failed   int
	Rounds   int
	Elapsed  time.Duration
	Verdict  Verdict
	Terms    []TermResult
}

// Outcome says how the search ended.
type Outcome string

const (
	Found     Outcome = "found"      // the boundary is bracketed to the resolution
	NoneMeets Outcome = "none-meets" // the lowest level fails the SLO
	AllMeet   Outcome = "all-meet"   // the highest level meets it
	Budget    Outcome = "budget"     // the budget ran out first: Lo..Hi is the bracket
	ErrorsHit Outcome = "errors"     // the server failed requests before the SLO bound
)

// Result is the search's answer.
type Result struct {
	Outcome Outcome
	// Answer is the largest level judged to meet the SLO (point decisions,
	// undecided probes by their point estimate); Lo..Hi is the range no
	// decided probe ruled out: every level ≤ Lo passed or lies below a
	// pass, every level > Hi failed or lies above a fail.
	Answer, Lo, Hi float64
	Probes         []Probe
	Requests       int
	Elapsed        time.Duration
	Reason         string
}

// Search runs the bracket-then-bisect search. The Prober is called with
// levels inside cfg's range only.
func Search(ctx context.Context, cfg Config, p Prober) (*Result, error) {
	cfg, err := cfg.Resolve()
	if err != nil {
		return nil, err
	}
	s := &searcher{cfg: cfg, p: p, res: &Result{}}
	return s.run(ctx)
}

type searcher struct {
	cfg Config
	p   Prober
	res *Result
}

func (s *searcher) budgetLeft() bool {
	c := s.cfg
	if c.MaxRequests > 0 && s.res.Requests+c.Batch > c.MaxRequests {
		return false
	}
	if c.MaxDuration > 0 && s.res.Elapsed >= c.MaxDuration {
		return false
	}
	return true
}

// probe measures level x in rounds until its verdict is decided, the
// rounds or the budget run out. ok is false when no round could run.
func (s *searcher) probe(ctx context.Context, x float64) (Probe, bool, error) {
	pr := Probe{X: x}
	pooled := map[string][]float64{}
	for pr.Rounds < s.cfg.MaxRounds {
		if !s.budgetLeft() {
			break
		}
		samples, el, err := s.p.Probe(ctx, x, s.cfg.Batch)
		if err != nil {
			return pr, pr.Rounds > 0, err
		}
		pr.Rounds++
		pr.Elapsed += el
		s.res.Elapsed += el
		s.res.Requests += len(samples)
		pr.Requests += len(samples)
		for _, sm := range samples {
			if !sm.OK {
				pr.Failed++
				continue
			}
			for _, t := range s.cfg.SLO {
				if v, ok := sm.Values[t.Metric]; ok {
					pooled[t.Metric] = append(pooled[t.Metric], v)
				}
			}
		}
		if pr.Requests > 0 && float64(pr.Failed)/float64(pr.Requests) > s.cfg.MaxErrorRate {
			pr.Verdict = Errors
			return pr, true, nil
		}
		pr.Verdict, pr.Terms = s.judge(pooled)
		if pr.Verdict != Undecided {
			return pr, true, nil
		}
	}
	return pr, pr.Rounds > 0, nil
}

// judge applies the rule: fail when any term's interval lies wholly above
// its bound; pass when every term's lies at or below it; else undecided.
func (s *searcher) judge(pooled map[string][]float64) (Verdict, []TermResult) {
	v := Pass
	var out []TermResult
	for _, t := range s.cfg.SLO {
		xs := append([]float64(nil), pooled[t.Metric]...)
		sort.Float64s(xs)
		n := int64(len(xs))
		tr := TermResult{Term: t.Text, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		if n > 0 {
			tr.Value = xs[min(n-1, int64(math.Ceil(t.Q*float64(n)))-1)]
			l, h := analyze.OrderCI(n, t.Q, s.cfg.Conf)
			if l >= 1 {
				tr.Lo = xs[l-1]
			}
			if h <= n {
				tr.Hi = xs[h-1]
			}
		}
		out = append(out, tr)
		switch {
		case tr.Lo > t.Bound:
			v = Fail
		case tr.Hi <= t.Bound:
		default:
			if v == Pass {
				v = Undecided
			}
		}
	}
	return v, out
}

// pointPass is an undecided probe's direction: its point estimates.
func (s *searcher) pointPass(pr Probe) bool {
	for i, t := range s.cfg.SLO {
		if !(pr.Terms[i].Value <= t.Bound) {
			return false
		}
	}
	return true
}

func (s *searcher) level(x float64) float64 {
	if s.cfg.Integer {
		return math.Round(x)
	}
	return x
}

func (s *searcher) run(ctx context.Context) (*Result, error) {
	c, r := s.cfg, s.res
	// confLo: highest decided pass (or just below the range); confHi:
	// lowest decided fail (or just above it). searchLo/Hi also move on
	// undecided probes, by their point estimate.
	below := c.Lo - c.Resolution
	above := c.Hi + c.Resolution
	confLo, confHi := below, above
	searchLo, searchHi := below, above
	finish := func(o Outcome, reason string) (*Result, error) {
		r.Outcome, r.Reason = o, reason
		r.Answer = searchLo
		r.Lo, r.Hi = confLo, confHi
		if c.Integer {
			r.Hi = confHi - 1
		}
		r.Lo, r.Hi = math.Max(r.Lo, c.Lo), math.Min(r.Hi, c.Hi)
		if o == NoneMeets {
			// The capacity lies below the range: [0, Lo) on the rate
			// axis, 0 users on the concurrency axis.
			r.Answer, r.Lo, r.Hi = 0, 0, c.Lo
			if c.Integer {
				r.Hi = c.Lo - 1
			}
		}
		return r, nil
	}
	record := func(x float64) (ok bool, stop bool, err error) {
		pr, ran, err := s.probe(ctx, x)
		if ran {
			r.Probes = append(r.Probes, pr)
		}
		if err != nil || !ran {
			return false, true, err
		}
		switch pr.Verdict {
		case Errors:
			return false, true, nil
		case Pass:
			confLo = math.Max(confLo, x)
			searchLo = math.Max(searchLo, x)
			return true, false, nil
		case Fail:
			confHi = math.Min(confHi, x)
			searchHi = math.Min(searchHi, x)
			return false, false, nil
		}
		if s.pointPass(pr) {
			searchLo = math.Max(searchLo, x)
			return true, false, nil
		}
		searchHi = math.Min(searchHi, x)
		return false, false, nil
	}
	last := func() Probe { return r.Probes[len(r.Probes)-1] }
	stopped := func(err error) (*Result, error) {
		if err != nil {
			return finishErr(finish, err)
		}
		if len(r.Probes) > 0 && last().Verdict == Errors {
			pr := last()
			return finish(ErrorsHit, fmt.Sprintf("%d of %d requests failed at %g, before the SLO bound", pr.Failed, pr.Requests, pr.X))
		}
		return finish(Budget, "the budget ran out before the boundary was bracketed")
	}
	// Bracket: Lo, then doubling until a level fails or Hi passes.
	x := c.Lo
	for {
		ok, stop, err := record(x)
		if stop {
			return stopped(err)
		}
		if !ok {
			if x == c.Lo {
				if last().Verdict == Fail {
					return finish(NoneMeets, fmt.Sprintf("the lowest level tried, %g, already fails the SLO", x))
				}
			}
			break
		}
		if x >= c.Hi {
			if last().Verdict == Pass {
				return finish(AllMeet, fmt.Sprintf("every level up to the highest, %g, meets the SLO", x))
			}
			break
		}
		x = s.level(math.Min(2*x, c.Hi))
	}
	// Bisect inside the bracket.
	for searchHi-searchLo > c.Resolution {
		mid := s.level((searchLo + searchHi) / 2)
		if c.Integer && (mid <= searchLo || mid >= searchHi) {
			break
		}
		_, stop, err := record(mid)
		if stop {
			return stopped(err)
		}
	}
	if searchLo < c.Lo {
		return finish(NoneMeets, fmt.Sprintf("no level from %g meets the SLO by its point estimate", c.Lo))
	}
	return finish(Found, "")
}

func finishErr(finish func(Outcome, string) (*Result, error), err error) (*Result, error) {
	r, _ := finish(Budget, "stopped: "+err.Error())
	return r, err
}
