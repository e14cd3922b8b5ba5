package capacity

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
)

// Sample is one measured request of a probe: each SLO metric's value in
// milliseconds (missing = the request did not produce it), whether it
// succeeded, whether it met the goodput bounds (see Term.Share), and its
// output tokens and send/end times for the aggregate throughput.
type Sample struct {
	OK     bool
	Values map[string]float64
	Good   bool
	Tokens int
	// Start and End are the request's send and end on the probe's clock.
	Start, End time.Duration
}

// Prober runs one probe: n measured requests at load level x (users for
// the concurrency axis, requests/s for the rate axis) after skipping the
// probe's warm-up, and returns them with the probe's wall time. A real
// prober is a phase of one replay; tests use a model.
type Prober interface {
	Probe(ctx context.Context, x float64, n int) ([]Sample, time.Duration, error)
}

// RoundSizer is a Prober whose rounds at level x measure other than the
// n requests asked (the rate axis's rounds of a stated duration): the
// budget counts the round it is about to run at its real size.
type RoundSizer interface {
	RoundSize(x float64, n int) int
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
	// PerRound judges a level by its rounds as independent draws instead
	// of pooling their requests (both axes of capacity/live; pooling is
	// kept for traces written before): each round gives each
	// term one value (the round's own percentile or share), and the
	// probe's value and interval are the median of those values over the
	// rounds and its order-statistic interval. The requests of one
	// open-loop round share one queue, so they are not independent draws
	// and a pooled interval is too narrow; rounds that start on an idle
	// server are. A decision needs MinRounds(Conf) rounds (8 at 99%).
	PerRound bool
}

// Defaults used by Resolve.
const (
	DefaultConf         = 0.99
	DefaultMaxRounds    = 4
	DefaultMaxErrorRate = 0.05
	// DefaultRoundBatch is the fewest measured requests of a round
	// judged on its own (PerRound): enough for a round's p90 to be its
	// 18th of 20 and a goodput share to lose one request at 95%. A
	// concurrency round measures C·max(2, ⌈Batch/C⌉) (capacity/live).
	DefaultRoundBatch = 20
)

// MinRounds is the fewest rounds for which the order-statistic interval
// of the median over rounds at level conf has both ends inside them:
// a PerRound probe can decide from this many rounds on.
func MinRounds(conf float64) int { return MinSamples(0.5, conf) }

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
	c.Conf = cmp.Or(c.Conf, DefaultConf)
	if c.Conf <= 0.5 || c.Conf >= 1 {
		return c, fmt.Errorf("capacity: probe confidence %g must lie in (0.5, 1)", c.Conf)
	}
	if c.PerRound {
		c.Batch = cmp.Or(c.Batch, DefaultRoundBatch)
		if c.Batch < 1 {
			return c, fmt.Errorf("capacity: %d requests per round: use at least 1", c.Batch)
		}
		k := MinRounds(c.Conf)
		c.MaxRounds = cmp.Or(c.MaxRounds, k+k/2)
		if c.MaxRounds < k {
			return c, fmt.Errorf("capacity: %d rounds per probe cannot decide the median round at %g%% confidence; use at least %d", c.MaxRounds, 100*c.Conf, k)
		}
		c.MaxErrorRate = cmp.Or(c.MaxErrorRate, DefaultMaxErrorRate)
		return c, nil
	}
	minN := 0
	for _, t := range c.SLO {
		if t.Share {
			minN = max(minN, MinShareSamples(t.Bound, c.Conf))
		} else {
			minN = max(minN, MinSamples(t.Q, c.Conf))
		}
	}
	c.Batch = cmp.Or(c.Batch, minN)
	if c.Batch < minN {
		return c, fmt.Errorf("capacity: %d requests per probe cannot decide the SLO at %g%% confidence; use at least %d", c.Batch, 100*c.Conf, minN)
	}
	c.MaxRounds = cmp.Or(c.MaxRounds, DefaultMaxRounds)
	c.MaxErrorRate = cmp.Or(c.MaxErrorRate, DefaultMaxErrorRate)
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
	// TPS is the aggregate output throughput at this level: the mean over
	// rounds of (output tokens of the round's successful measured
	// requests) / (last end − first send among them), tok/s.
	TPS float64
	// Samples are every round's measured requests, in rounds.
	Samples [][]Sample `json:"-"`
}

// Outcome says how the search ended.
type Outcome string

const (
	Found     Outcome = "found"      // the boundary is bracketed to the resolution
	NoneMeets Outcome = "none-meets" // the lowest level fails the SLO
	AllMeet   Outcome = "all-meet"   // the highest level meets it
	Budget    Outcome = "budget"     // the budget ran out first: Lo..Hi is the bracket
	ErrorsHit Outcome = "errors"     // the server failed requests before the SLO bound
	// NoDecision: probes ran but none decided (every interval still
	// straddled its bound after its rounds): nothing in the range is
	// ruled out, and Lo..Hi is the tested range.
	NoDecision Outcome = "undecided"
)

// NoDecisionReason is the reason of the NoDecision outcome.
const NoDecisionReason = "no probe decided: every probe's interval still straddled the SLO bound after its rounds"

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
	// Knee is the second answer: where adding load stops adding
	// aggregate throughput (see KneeOf).
	Knee Knee
}

// Undetermined is the error of a search that ended without an answer
// (its budget ran out, the server failed requests first, no probe
// decided), saying why; nil when it answered (Found, NoneMeets, AllMeet).
func (r *Result) Undetermined() error {
	switch r.Outcome {
	case Budget, ErrorsHit, NoDecision:
		return fmt.Errorf("could not determine the capacity: %s", r.Reason)
	}
	return nil
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

func (s *searcher) budgetLeft(x float64) bool {
	c := s.cfg
	next := c.Batch
	if rs, ok := s.p.(RoundSizer); ok {
		next = rs.RoundSize(x, c.Batch)
	}
	if c.MaxRequests > 0 && s.res.Requests+next > c.MaxRequests {
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
	for pr.Rounds < s.cfg.MaxRounds {
		if !s.budgetLeft(x) {
			break
		}
		samples, el, err := s.p.Probe(ctx, x, s.cfg.Batch)
		if err != nil {
			return pr, pr.Rounds > 0, err
		}
		pr.Rounds++
		pr.Samples = append(pr.Samples, samples)
		pr.Elapsed += el
		s.res.Elapsed += el
		s.res.Requests += len(samples)
		pr.Requests += len(samples)
		for _, sm := range samples {
			if !sm.OK {
				pr.Failed++
			}
		}
		pr.Verdict, pr.Terms = JudgeSamples(s.cfg, pr.Samples)
		pr.TPS = Throughput(pr.Samples)
		if pr.Verdict != Undecided {
			return pr, true, nil
		}
	}
	return pr, pr.Rounds > 0, nil
}

func (s *searcher) level(x float64) float64 {
	if s.cfg.Integer {
		return math.Round(x)
	}
	// A rate is written into a workload's schedule: thousandths suffice.
	return math.Round(x*1000) / 1000
}

// passDirection is where a probe sends the search: decided probes by
// their verdict, undecided ones by their point estimates.
func passDirection(cfg Config, pr Probe) bool {
	switch pr.Verdict {
	case Pass:
		return true
	case Fail, Errors:
		return false
	}
	for i, t := range cfg.SLO {
		if i >= len(pr.Terms) {
			return false
		}
		if !t.within(pr.Terms[i].Value) {
			return false
		}
	}
	return true
}

func (s *searcher) run(ctx context.Context) (*Result, error) {
	c, r := s.cfg, s.res
	record := func(x float64) (stop bool, err error) {
		pr, ran, err := s.probe(ctx, x)
		if ran {
			r.Probes = append(r.Probes, pr)
		}
		if err != nil || !ran {
			return true, err
		}
		return pr.Verdict == Errors, nil
	}
	done := func(reason string, err error) (*Result, error) {
		out := Evaluate(c, r.Probes, reason)
		out.Requests, out.Elapsed = r.Requests, r.Elapsed
		return out, err
	}
	stopped := func(err error) (*Result, error) {
		if err != nil {
			return done("stopped: "+err.Error(), err)
		}
		if len(r.Probes) == 0 {
			return done(BudgetFirstReason, nil)
		}
		return done(BudgetReason, nil)
	}
	// Bracket: Lo, then doubling until a level fails or Hi passes.
	x := c.Lo
	for {
		if stop, err := record(x); stop {
			return stopped(err)
		}
		if !passDirection(c, r.Probes[len(r.Probes)-1]) || x >= c.Hi {
			break
		}
		x = s.level(math.Min(2*x, c.Hi))
	}
	// Bisect inside the bracket.
	for {
		_, _, lo, hi := bounds(c, r.Probes)
		if hi-lo <= c.Resolution {
			break
		}
		mid := s.level((lo + hi) / 2)
		if c.Integer && (mid <= lo || mid >= hi) {
			break
		}
		if stop, err := record(mid); stop {
			return stopped(err)
		}
	}
	return done(BudgetReason, nil)
}

// BudgetReason is the reason of a search stopped by its budget.
const BudgetReason = "the budget ran out before the boundary was bracketed"

// BudgetFirstReason is the reason of a search whose budget did not cover
// its first probe: nothing was measured.
const BudgetFirstReason = "the budget ran out before the first probe finished: raise it above one probe's requests or time"

// bounds reads the probes, in any order: confHi is the lowest level that
// failed, confLo the highest below it that passed (decided verdicts);
// searchHi and searchLo are the same with undecided probes counted by
// their point estimates. Levels outside the range count as just below
// Lo and just above Hi by Resolution.
func bounds(c Config, probes []Probe) (confLo, confHi, searchLo, searchHi float64) {
	confHi, searchHi = c.Hi+c.Resolution, c.Hi+c.Resolution
	for _, pr := range probes {
		switch {
		case pr.Verdict == Errors:
		case pr.Verdict == Fail:
			confHi = math.Min(confHi, pr.X)
			searchHi = math.Min(searchHi, pr.X)
		case !passDirection(c, pr):
			searchHi = math.Min(searchHi, pr.X)
		}
	}
	confLo, searchLo = c.Lo-c.Resolution, c.Lo-c.Resolution
	for _, pr := range probes {
		if pr.Verdict == Pass && pr.X < confHi {
			confLo = math.Max(confLo, pr.X)
		}
		if pr.Verdict != Errors && passDirection(c, pr) && pr.X < searchHi {
			searchLo = math.Max(searchLo, pr.X)
		}
	}
	return
}

// Evaluate turns probes (from a search, or read back from its trace and
// judged again, possibly for another SLO) into the answer. It is the one
// place the outcome is decided, so a trace re-analysed for the same SLO
// gives the search's own answer. reason is said when the probes do not
// resolve the boundary (a search's budget, a trace's missing levels).
func Evaluate(c Config, probes []Probe, reason string) *Result {
	confLo, confHi, searchLo, searchHi := bounds(c, probes)
	r := &Result{Probes: probes, Answer: searchLo, Lo: confLo, Hi: confHi}
	for _, pr := range probes {
		r.Requests += pr.Requests
		r.Elapsed += pr.Elapsed
	}
	if c.Integer {
		r.Hi = confHi - 1
	}
	// No decided pass: nothing shows even the lowest level meets the SLO,
	// so the interval starts at 0, not at the range's low end.
	if r.Lo < c.Lo {
		r.Lo = 0
	}
	r.Hi = math.Min(r.Hi, c.Hi)
	r.Answer = math.Max(r.Answer, c.Lo)
	none := func(why string) *Result {
		// The capacity lies below the range: [0, Lo) on the rate axis,
		// 0 users on the concurrency axis.
		r.Outcome, r.Reason = NoneMeets, why
		r.Answer, r.Lo, r.Hi = 0, 0, c.Lo
		if c.Integer {
			r.Hi = c.Lo - 1
		}
		return r
	}
	var errs *Probe
	for i := range probes {
		if pr := &probes[i]; pr.Verdict == Errors && (errs == nil || pr.X < errs.X) {
			errs = pr
		}
	}
	at := func(x float64, v Verdict) bool {
		for _, pr := range probes {
			if pr.X == x && pr.Verdict == v {
				return true
			}
		}
		return false
	}
	r.Knee = KneeOf(probes)
	decided := false
	for _, pr := range probes {
		decided = decided || pr.Verdict == Pass || pr.Verdict == Fail
	}
	switch {
	case errs != nil && errs.X <= searchHi:
		r.Outcome = ErrorsHit
		r.Reason = fmt.Sprintf("%d of %d requests failed at %g, before the SLO bound", errs.Failed, errs.Requests, errs.X)
		if errs.X == c.Lo {
			r.Answer, r.Lo, r.Hi = 0, 0, c.Hi
		}
	case at(c.Lo, Fail):
		return none(fmt.Sprintf("the lowest level tried, %g, already fails the SLO", c.Lo))
	case at(c.Hi, Pass) && searchLo >= c.Hi:
		r.Outcome, r.Reason = AllMeet, fmt.Sprintf("every level up to the highest, %g, meets the SLO", c.Hi)
	case len(probes) > 0 && !decided:
		// The interval would run from 0 to the top of the range, a claim
		// about levels below it that no probe tested: say the range.
		r.Outcome, r.Reason = NoDecision, NoDecisionReason
		if searchHi-searchLo > c.Resolution && reason != "" {
			r.Reason += "; " + reason
		}
		r.Lo, r.Hi = c.Lo, c.Hi
	case searchHi-searchLo <= c.Resolution:
		if searchLo < c.Lo {
			return none(fmt.Sprintf("no level from %g meets the SLO by its point estimate", c.Lo))
		}
		r.Outcome = Found
	default:
		r.Outcome, r.Reason = Budget, reason
		if len(probes) == 0 && reason == "" {
			r.Reason = "no probe ran"
		}
	}
	return r
}
