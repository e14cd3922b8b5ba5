// Package live runs the capacity search (package capacity) against a
// server: every probe round is a replay of its own small workload (a
// closed-loop phase of C users, or an open-loop phase at R requests/s),
// and every round becomes a phase of ONE trace, rewritten after each
// round, so the search can be re-analysed offline (Reanalyse) for any
// other SLO without sending a request. It composes the pipeline's
// packages (workload → replay → trace → capacity) and keeps no policy of
// the search itself.
package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// Axes of the search (capacity's).
const (
	AxisConcurrency = capacity.AxisConcurrency
	AxisRate        = capacity.AxisRate
)

// Warm-up rules, stated in the trace header and docs/CAPACITY.md.
const (
	WarmupConcurrency = "each user's first request"
	WarmupRate        = "the first 10% of each round's requests, at least 5"
)

// RoundRule is the rate axis's round rule, stated in the trace header
// (capacity_rounds): how long a round lasts and how a level is judged
// from its rounds. A trace of the rate axis without it was judged by
// pooling its rounds' requests (before the rule).
func RoundRule(d time.Duration) string {
	return fmt.Sprintf("independent rounds from an idle server, each of ceil(%v x rate) measured requests (at least the batch) in the server's time, judged by the median over rounds of each round's own value", d)
}

// ClosedRoundRule is the concurrency axis's round rule, stated in the
// trace header (capacity_rounds) with the round's batch (the fewest
// measured requests a round holds; see capacity.ClosedRoundMeasured). A
// trace of the concurrency axis without it was judged by pooling its
// rounds' requests (before the rule) and is re-decided so.
func ClosedRoundRule(batch int) string {
	return fmt.Sprintf("independent rounds from an idle server, C users each sending 1 + max(2, ceil(%d/C)) requests one after another, the first of each skipped, judged by the median over rounds of each round's own value", batch)
}

// DefaultRoundDuration is the rate axis's round, in the server's time
// (scaled by the simulator's time scale): a round's measured requests
// are its rate times this, so a round at a rate the server cannot sustain
// lasts long enough for its queue to show it. Shorter rounds answer a
// rate the server holds for that long from idle, not one it sustains:
// for llama.cpp at ttft_p90<=1s the engine model gives 4.4 req/s with
// 10 s rounds, 3.8 with 20 s and 3.6 with 30 s (its service rate is
// about 3.4); 20 s keeps a probe of 8 rounds near 3 minutes at that pace.
const DefaultRoundDuration = 20 * time.Second

// Config is one capacity run.
type Config struct {
	// Replay holds the endpoint settings; Workload and Trace are set here.
	Replay replay.Config
	// Search is the search's configuration (SLO, range, budget …).
	Search capacity.Config
	Axis   string

	InputTokens int
	MaxTokens   int
	Tokenizer   string
	Shape       workload.Shape
	Prefix      string
	// GoodputBounds are the per-request bounds a goodput>=P% term counts
	// requests against.
	GoodputBounds analyze.SLO

	// Profile is the simulator profile when Replay.URL is empty, run at
	// TimeScale (1: the profile's own pace); the SLO and goodput bounds
	// are scaled alike.
	Profile   string
	TimeScale float64
	Sim       sim.Config

	// RoundDuration is the rate axis's round in the server's time
	// (0: DefaultRoundDuration); see RoundMeasured.
	RoundDuration time.Duration

	// Seed varies the rounds' prompts between runs (round r's workload
	// seed is Seed·1000 + r + 1); runs with equal seeds send equal prompts.
	Seed int64

	// Trace is the output path.
	Trace string
	// Resume continues the search recorded in this capacity trace (a run
	// that was stopped or crashed): its rounds are handed to the search
	// again in order, which walks the same path until they run out, and
	// the search goes on live from there, appending to the same trace.
	// The settings must be the trace's.
	Resume string
	// OnProbe hears every probe round as it ends (a progress line).
	OnProbe func(x float64, round int, s *replay.Summary)
}

// Result is a capacity run's answer and where it is kept.
type Result struct {
	*capacity.Result
	Trace     string
	Simulated bool
	Profile   string
	URL       string
	Model     string
	// Search is the resolved search configuration (scaled SLO); SLO is
	// the SLO asked, Axis and TimeScale the run's.
	Search    capacity.Config
	SLO       capacity.SLO
	Axis      string
	TimeScale float64
	// SimLate is how far, in all, the built-in simulator's steps ended
	// behind their planned times (each beyond a millisecond): a machine
	// too busy to keep the simulator's pace, which raises every latency
	// the search sees (0 against a --url server).
	SimLate time.Duration
}

// Resolve checks c before anything starts and fills defaults.
func (c Config) Resolve() (Config, error) {
	switch c.Axis {
	case "":
		c.Axis = AxisConcurrency
	case AxisConcurrency, AxisRate:
	default:
		return c, fmt.Errorf("axis %q is unknown: use --axis concurrency or --axis rate", c.Axis)
	}
	c.Search.Integer = c.Axis == AxisConcurrency
	// Both axes judge a level by independent rounds: a closed-loop
	// round's requests share one engine (users that end together restart
	// together) as an open-loop round's share one queue.
	c.Search.PerRound = true
	c.TimeScale = cmp.Or(c.TimeScale, 1)
	if !(c.TimeScale > 0 && c.TimeScale <= 1) {
		return c, fmt.Errorf("time scale %g is out of range: use a factor above 0 and at most 1", c.TimeScale)
	}
	if c.TimeScale != 1 && c.Replay.URL != "" {
		return c, fmt.Errorf("a time scale applies to the built-in simulator only: drop it, or drop the URL")
	}
	c.RoundDuration = cmp.Or(c.RoundDuration, DefaultRoundDuration)
	if c.RoundDuration < 0 {
		return c, fmt.Errorf("round duration %v: give a positive duration", c.RoundDuration)
	}
	c.InputTokens = cmp.Or(c.InputTokens, 800)
	c.MaxTokens = cmp.Or(c.MaxTokens, 256)
	if c.GoodputBounds == (analyze.SLO{}) {
		c.GoodputBounds = analyze.DefaultSLO
	}
	s := c.Search
	s.SLO = s.SLO.Scaled(c.TimeScale)
	if _, err := s.Resolve(); err != nil {
		return c, err
	}
	if c.Replay.URL == "" {
		c.Profile = cmp.Or(c.Profile, DefaultProfile)
		if _, err := sim.LookupProfile(c.Profile); err != nil {
			return c, err
		}
	}
	if c.Trace == "" {
		return c, errors.New("no trace path")
	}
	if c.Resume != "" {
		// Before a simulator starts or a server is asked: a file that is
		// missing or not a trace is bad input, said at once.
		r, err := trace.Open(c.Resume)
		if errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("--resume %s: no such file: give the capacity trace of the search to continue (the -o of the run that stopped)", c.Resume)
		}
		if err != nil {
			return c, fmt.Errorf("--resume %v", strings.TrimPrefix(err.Error(), "trace: "))
		}
		r.Close()
	}
	return c, nil
}

// MaxUsers is the most users a concurrency search probes; a trace whose
// header says more is refused.
const MaxUsers = 100000

// Run searches. The trace holds every probe round that finished, whatever
// the outcome; the error is for a run that could not go on (server
// unreachable, trace unwritable, stopped).
func Run(ctx context.Context, c Config) (*Result, error) {
	c, err := c.Resolve()
	if err != nil {
		return nil, err
	}
	tok, err := tokenize.Load(orDefault(c.Tokenizer, workload.DefaultTokenizer))
	if err != nil {
		return nil, err
	}
	res := &Result{Trace: c.Trace, SLO: c.Search.SLO, Axis: c.Axis, TimeScale: c.TimeScale}
	rc := c.Replay
	if rc.URL == "" {
		p, _ := sim.LookupProfile(c.Profile)
		sc := c.Sim
		sc.Profile = p.Scaled(c.TimeScale)
		sc.Tokenizer = cmp.Or(sc.Tokenizer, tok.Name())
		srv, err := sim.New(sc)
		if err != nil {
			return nil, err
		}
		if err := srv.Start("127.0.0.1:0"); err != nil {
			return nil, err
		}
		defer func() { res.SimLate = srv.Lateness() }()
		defer srv.Close()
		rc.URL, rc.Simulated, rc.SimProfile = srv.URL(), true, p.Name
		rc.Label = cmp.Or(rc.Label, "sim "+p.Name)
		res.Simulated, res.Profile = true, p.Name
	}
	res.URL = replay.RedactURL(rc.URL)
	search := c.Search
	search.SLO = search.SLO.Scaled(c.TimeScale)
	search, _ = search.Resolve()
	res.Search = search
	pr := &prober{cfg: c, rc: rc, tok: tok, search: search}
	if c.Resume != "" {
		if err := pr.resume(c.Resume, res); err != nil {
			return nil, err
		}
	}
	defer os.Remove(pr.roundPath())
	sr, serr := capacity.Search(ctx, search, pr)
	if sr == nil {
		return nil, serr
	}
	res.Result = sr
	res.Model = pr.model
	// The outcome goes into the trace's header too (the probes are there
	// already), for a reader who only has the file.
	if len(pr.recs) > 0 {
		pr.outcome = string(sr.Outcome)
		if serr != nil {
			pr.outcome = OutcomeStopped
		}
		if err := pr.write(); err != nil && serr == nil {
			serr = err
		}
	}
	return res, serr
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// prober runs probe rounds through replay and keeps the one trace.
type prober struct {
	cfg    Config
	rc     replay.Config
	tok    tokenize.Tokenizer
	search capacity.Config

	round   int // rounds run so far (the next phase index)
	cached  map[float64][]cachedRound
	levelN  map[float64]int
	first   time.Time
	header  trace.Header
	phases  []trace.Phase
	recs    []*trace.Record
	scrapes map[int][]*trace.Scrape // the server's /metrics readings, before record i
	model   string
	outcome string
}

func (p *prober) roundPath() string { return p.cfg.Trace + ".round.tmp" }

// warmup is how many of a round's first requests (by schedule order) the
// rule skips.
func (p *prober) warmup(x float64, n int) int {
	if p.cfg.Axis == AxisConcurrency {
		return int(x)
	}
	return max(5, int(math.Ceil(float64(n)/9))) // 10% of n + w
}

func (p *prober) Probe(ctx context.Context, x float64, n int) ([]capacity.Sample, time.Duration, error) {
	if q := p.cached[x]; len(q) > 0 {
		p.cached[x] = q[1:]
		return q[0].samples, q[0].elapsed, nil
	}
	sched := "closed:" + strconv.Itoa(int(x))
	if p.cfg.Axis == AxisRate {
		sched = "rate:" + strconv.FormatFloat(x, 'f', -1, 64)
	}
	n = p.RoundSize(x, n)
	w := p.warmup(x, n)
	wl, err := workload.Build(workload.BuildConfig{
		Tok: p.tok, Shape: p.cfg.Shape, InputTokens: []int{p.cfg.InputTokens}, MaxTokens: p.cfg.MaxTokens,
		Prefix: p.cfg.Prefix, Schedule: sched, Requests: n + w, Seed: p.cfg.Seed*1000 + int64(p.round+1),
	})
	if err != nil {
		return nil, 0, err
	}
	rc := p.rc
	rc.Workload, rc.Trace = wl, p.roundPath()
	if p.model != "" {
		rc.Model = p.model // discovered once, asked again never
	}
	sum, err := replay.Run(ctx, rc)
	if err != nil {
		return nil, 0, err
	}
	p.model = sum.Model
	if p.cfg.OnProbe != nil {
		p.cfg.OnProbe(x, p.levelRound(x), sum)
	}
	samples, err := p.take(x, w, wl)
	if err != nil {
		return nil, 0, err
	}
	if sum.Stopped {
		return samples, sum.Elapsed, errors.New("stopped: the trace holds every probe round that finished")
	}
	return samples, sum.Elapsed, nil
}

// RoundMeasured is a rate round's measured requests at rate x (requests
// per second of real time), round duration d (the server's time) and
// time scale scale: at least batch, and enough that the round's arrivals
// span d of the server's time.
func RoundMeasured(x float64, batch int, d time.Duration, scale float64) int {
	return max(batch, int(math.Ceil(x*d.Seconds()*scale)))
}

// RoundSize is the measured requests of a round at x (capacity.RoundSizer).
func (p *prober) RoundSize(x float64, n int) int {
	if p.cfg.Axis == AxisRate {
		return RoundMeasured(x, n, p.cfg.RoundDuration, p.cfg.TimeScale)
	}
	return capacity.ClosedRoundMeasured(int(x), n)
}

func (p *prober) levelRound(x float64) int {
	if p.levelN == nil {
		p.levelN = map[float64]int{}
	}
	return p.levelN[x] + 1
}

// take reads the round's trace back, moves its records into the run's
// trace as phase p.round (warm-up marked by the rule, times on the first
// round's clock), rewrites the run's trace, and returns the samples.
func (p *prober) take(x float64, w int, wl *workload.Workload) ([]capacity.Sample, error) {
	r, err := trace.Open(p.roundPath())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	start, err := time.Parse(time.RFC3339Nano, h.StartWall)
	if err != nil {
		return nil, fmt.Errorf("round trace: start time %q: %v", h.StartWall, err)
	}
	if p.round == 0 {
		p.first, p.header = start, h
	}
	off := start.Sub(p.first).Nanoseconds()
	g := p.round
	rep := p.levelRound(x) - 1
	p.levelN[x]++
	ph := h.Phases[0]
	ph.Index, ph.Repeat = g, rep
	ph.Name = fmt.Sprintf("probe %s %s round %d", capacity.Level(p.cfg.Axis, x), p.cfg.Axis, rep+1)
	if p.cfg.Axis == AxisRate {
		ph.Rate = x
	}
	p.phases = append(p.phases, ph)
	p.round++
	var round []*trace.Record
	r.IncludeScrapes()
	for r.Scan() {
		if sc := r.Scrape(); sc != nil {
			p.keepScrape(sc, off)
			continue
		}
		rec := r.Record().Clone()
		rec.Warmup = rec.Warmup || rec.Index < w
		rec.Phase = g
		if _, suffix, ok := strings.Cut(rec.ID, "-"); ok {
			rec.ID = fmt.Sprintf("p%03d-%s", g, suffix)
		}
		rec.Shift(off)
		round = append(round, rec)
		p.recs = append(p.recs, rec)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("round trace: %v", err)
	}
	if err := p.write(); err != nil {
		return nil, err
	}
	return Samples(p.header, round, p.cfg.GoodputBounds, p.cfg.TimeScale)
}

// write rewrites the run's trace with every round so far: a new file
// renamed over the old, so a crash leaves the previous complete version
// (and the round in flight in its own file, NAME.round.tmp).
func (p *prober) write() error {
	h := p.header
	h.Phases = p.phases
	h.Options = map[string]string{}
	for k, v := range p.header.Options {
		h.Options[k] = v
	}
	for k, v := range p.options() {
		h.Options[k] = v
	}
	tmp := p.cfg.Trace + ".tmp"
	w, err := trace.Create(tmp, h)
	if err != nil {
		return err
	}
	for i := 0; i <= len(p.recs); i++ {
		for _, sc := range p.scrapes[i] {
			if err := w.WriteScrape(sc); err != nil {
				w.Close()
				os.Remove(tmp)
				return err
			}
		}
		if i == len(p.recs) {
			break
		}
		if err := w.Write(p.recs[i]); err != nil {
			w.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := w.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p.cfg.Trace)
}

// OutcomeStopped is the trace's capacity_outcome of a search that was
// stopped (Ctrl-C, a server that went away) before it ended.
const OutcomeStopped = "stopped"

// Header option names of a capacity trace.
const (
	OptAxis       = "capacity_axis"
	OptSLO        = "capacity_slo"
	OptRange      = "capacity_range"
	OptResolution = "capacity_resolution"
	OptConf       = "capacity_probe_confidence"
	OptMaxErrors  = "capacity_max_error_rate"
	OptTimeScale  = "capacity_time_scale"
	OptGoodput    = "capacity_goodput_bounds"
	OptWarmup     = "capacity_warmup"
	OptOutcome    = "capacity_outcome"
	OptRounds     = "capacity_rounds"
)

func (p *prober) options() map[string]string {
	s, c := p.search, p.cfg
	var terms []string
	for _, t := range c.Search.SLO {
		terms = append(terms, t.Text)
	}
	o := map[string]string{
		OptAxis:       c.Axis,
		OptSLO:        strings.Join(terms, ","),
		OptRange:      fmt.Sprintf("%g:%g", s.Lo, s.Hi),
		OptResolution: strconv.FormatFloat(s.Resolution, 'g', -1, 64),
		OptConf:       strconv.FormatFloat(s.Conf, 'g', -1, 64),
		OptMaxErrors:  strconv.FormatFloat(s.MaxErrorRate, 'g', -1, 64),
		OptTimeScale:  strconv.FormatFloat(c.TimeScale, 'g', -1, 64),
		OptGoodput:    c.GoodputBounds.String(),
		OptWarmup:     WarmupConcurrency,
		OptRounds:     ClosedRoundRule(s.Batch),
	}
	if c.Axis == AxisRate {
		o[OptWarmup] = WarmupRate
		o[OptRounds] = RoundRule(c.RoundDuration)
	}
	if p.outcome != "" {
		o[OptOutcome] = p.outcome
	}
	return o
}

// Samples turns a round's records into the search's samples: warm-up
// records are left out; each metric in milliseconds from analyze's own
// per-request code; Good when the request succeeded within the goodput
// bounds scaled by scale (a request with fewer than 2 tokens has TPOT 0).
func Samples(h trace.Header, recs []*trace.Record, good analyze.SLO, scale float64) ([]capacity.Sample, error) {
	l, err := analyze.NewRequestLister("", h, "")
	if err != nil {
		return nil, err
	}
	b := func(d time.Duration) float64 { return float64(d) / 1e6 * scale }
	var out []capacity.Sample
	for _, rec := range recs {
		// A request cut because the run was stopped says nothing about
		// the server: counted as a failure it could make a stopped round
		// look like errors when the trace is read back or resumed.
		if rec.Warmup || (rec.Error != nil && rec.Error.Class == trace.ErrCancelled) {
			continue
		}
		row := l.Row(rec)
		s := capacity.Sample{OK: row.OK, Values: map[string]float64{}, Tokens: row.OutputTokens,
			Start: time.Duration(rec.Sent), End: time.Duration(rec.Done)}
		for name, v := range map[string]*float64{"ttft": row.TTFTS, "tpot": row.TPOTS, "e2e": row.E2ES} {
			if v != nil {
				s.Values[name] = *v * 1000
			}
		}
		if s.OK {
			s.Good = true
			for _, c := range []struct {
				metric string
				bound  time.Duration
			}{{"ttft", good.TTFT}, {"tpot", good.TPOT}, {"e2e", good.E2E}} {
				if c.bound > 0 && s.Values[c.metric] > b(c.bound) {
					s.Good = false
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// DefaultTracePath names a capacity run's trace in results.
func DefaultTracePath(results, label, model string, now time.Time) string {
	return filepath.Join(results, trace.RunName(label, model, "capacity", now)+".capacity.trace.zst")
}

// cachedRound is a round read back from a trace being resumed.
type cachedRound struct {
	samples []capacity.Sample
	elapsed time.Duration
}

// resume loads the trace at path into p: its header, phases and records
// (kept in the trace), and its rounds as the answers to the search's first
// probes. It refuses a trace of other settings, naming the one that
// differs.
func (p *prober) resume(path string, res *Result) error {
	r, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	if h.Options[OptAxis] == "" {
		return fmt.Errorf("--resume %s: not a capacity trace (its header has no %s)", path, OptAxis)
	}
	want := p.options()
	if h.Options[OptRounds] == "" {
		return fmt.Errorf("--resume %s: the trace pooled its rounds' requests (it was written before rounds were judged on their own, %s); this version cannot continue it: start a new search ('capacity --from' still re-decides it as it was decided)", path, OptRounds)
	}
	for _, k := range []string{OptAxis, OptSLO, OptRange, OptResolution, OptConf, OptMaxErrors, OptTimeScale, OptGoodput, OptRounds} {
		if h.Options[k] != want[k] {
			return fmt.Errorf("--resume %s: the trace's %s is %q, this run's %q: resume with the trace's settings", path, k, h.Options[k], want[k])
		}
	}
	if h.Simulated != res.Simulated || (h.Simulated && h.SimProfile != res.Profile) {
		return fmt.Errorf("--resume %s: the trace measured %s, this run %s: resume against the same server", path, serverName(h.Simulated, h.SimProfile, h.URL), serverName(res.Simulated, res.Profile, res.URL))
	}
	if !h.Simulated && h.URL != res.URL {
		return fmt.Errorf("--resume %s: the trace measured %s, this run %s: resume against the same server", path, h.URL, res.URL)
	}
	start, err := time.Parse(time.RFC3339Nano, h.StartWall)
	if err != nil {
		return fmt.Errorf("--resume %s: start time %q: %v", path, h.StartWall, err)
	}
	delete(h.Options, OptOutcome) // said again when this run ends
	p.header, p.first, p.phases = h, start, h.Phases
	p.round = len(h.Phases)
	p.model = h.Model
	byPhase := map[int][]*trace.Record{}
	r.IncludeScrapes()
	for r.Scan() {
		if sc := r.Scrape(); sc != nil {
			p.keepScrape(sc, 0)
			continue
		}
		rec := r.Record().Clone()
		p.recs = append(p.recs, rec)
		byPhase[rec.Phase] = append(byPhase[rec.Phase], rec)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("--resume %s: %v", path, err)
	}
	p.cached = map[float64][]cachedRound{}
	p.levelN = map[float64]int{}
	for _, ph := range h.Phases {
		x := float64(ph.Concurrency)
		if p.cfg.Axis == AxisRate {
			x = ph.Rate
		}
		recs := byPhase[ph.Index]
		s, err := Samples(h, recs, p.cfg.GoodputBounds, p.cfg.TimeScale)
		if err != nil {
			return err
		}
		var lo, hi int64
		for i, rec := range recs {
			if i == 0 || rec.Scheduled < lo {
				lo = rec.Scheduled
			}
			hi = max(hi, rec.Done)
		}
		p.cached[x] = append(p.cached[x], cachedRound{samples: s, elapsed: time.Duration(hi - lo)})
		p.levelN[x]++
	}
	return nil
}

func serverName(simulated bool, profile, url string) string {
	if simulated {
		return "the simulator's " + profile + " profile"
	}
	return url
}

// keepScrape keeps a copy of a scrape, moved onto the run's clock by off,
// in its place among the records.
func (p *prober) keepScrape(sc *trace.Scrape, off int64) {
	c := *sc
	c.T += off
	c.Samples = append([]trace.Sample(nil), sc.Samples...)
	if p.scrapes == nil {
		p.scrapes = map[int][]*trace.Scrape{}
	}
	p.scrapes[len(p.recs)] = append(p.scrapes[len(p.recs)], &c)
}

// MeanStepLag estimates how late, on average, the built-in simulator's
// engine steps ended behind their planned times during the search: its
// summed lateness (SimLate) over an estimate of the steps it ran. A
// request's first token comes out of one step and carries that step's
// lateness, so this is the mean amount by which a busy machine, not the
// model, lengthened the latencies the search judged.
//
// The engine does not count its steps; they are estimated from the
// probes by Little's law: a round whose successful measured requests
// produced T output tokens over a span S (first send to last end) while
// their response times summed to E had E/S requests in flight on average,
// each step making one token for each, so about T·S/E steps. Requests
// queued but not yet running count as in flight, and warm-up requests
// are not counted, so the estimate is low and the lag high: a rule based
// on it leaves out more runs, not fewer. 0 without a simulator.
func (r *Result) MeanStepLag() time.Duration {
	if r == nil || r.Result == nil || r.SimLate <= 0 {
		return 0
	}
	steps := 0.0
	for _, p := range r.Probes {
		for _, round := range p.Samples {
			var first, last, busy time.Duration
			tokens, seen := 0, false
			for _, s := range round {
				if !s.OK || s.End <= s.Start {
					continue
				}
				if !seen || s.Start < first {
					first = s.Start
				}
				last = max(last, s.End)
				busy += s.End - s.Start
				tokens += s.Tokens
				seen = true
			}
			if seen && busy > 0 {
				steps += float64(tokens) * float64(last-first) / float64(busy)
			}
		}
	}
	if steps < 1 {
		return r.SimLate
	}
	return time.Duration(float64(r.SimLate) / steps)
}
