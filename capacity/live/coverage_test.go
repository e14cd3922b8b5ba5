package live

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
)

// goldenLevel is one line of a dense brute-force sweep
// (capacity/testdata/sim-truth-*.txt, made by sim-truth.sh): the pooled
// TTFT p90 at one level with its 99% interval, ms at the file's time scale.
type goldenLevel struct {
	users       int
	p90, lo, hi float64
}

var goldenLine = regexp.MustCompile(`^users (\d+) n \d+ ttft_p90_ms ([\d.]+) ci99 ([\d.]+) ([\d.]+)$`)

func readGolden(t *testing.T, name string) []goldenLevel {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenLevel
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := goldenLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var g goldenLevel
		g.users, _ = strconv.Atoi(m[1])
		g.p90, _ = strconv.ParseFloat(m[2], 64)
		g.lo, _ = strconv.ParseFloat(m[3], 64)
		g.hi, _ = strconv.ParseFloat(m[4], 64)
		out = append(out, g)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no levels", name)
	}
	return out
}

// sweepTruth is the capacity a sweep shows for a TTFT p90 bound (ms at
// the sweep's scale): the last level of the leading run of levels whose
// whole 99% interval lies at or below the bound (a sweep starting above 1
// user takes the levels below it to meet the bound: TTFT only grows
// with load there, by the model and by the 0.1 sweep). decided is false when a
// level's interval straddles the bound before the first that fails: the
// sweep cannot tell, and such a bound must not be used for a coverage test.
func sweepTruth(levels []goldenLevel, bound float64) (truth int, decided bool) {
	for _, g := range levels {
		switch {
		case g.hi <= bound:
			truth = g.users
		case g.lo > bound:
			return truth, true
		default:
			return truth, false
		}
	}
	return truth, false // every level meets it: the sweep ends before the limit
}

// coverageCase is one profile and SLO whose true capacity the engine
// model gives by the round rule, with margin; the model is checked
// against the dense sweep of the running simulator (TestModelAgreesWithSweep).
type coverageCase struct {
	golden  string
	profile string
	slo     string
	scale   float64 // the simulator's time scale, the sweep's
	boundMs float64 // the SLO's bound at that scale
	lo, hi  float64 // the search range
	pooled  int     // the capacity by the pooled p90 of 51+C rounds: the golden sweep's and the model's (checked)
	truth   int     // the capacity by the round rule, the model's (checked)
	// quick is TestSearchAgainstSimulator's range: around the truth,
	// without the levels of one and two users, whose rounds run one
	// request after another and take half a search's time. Its low end
	// lies far enough under the bound (4 users: 61 ms against 100) to
	// decide on a loaded machine: with 5..7 under -race at load 11 every
	// probe stayed undecided.
	quick [2]float64
}

// modelHop is the client's hop measured against the simulator on the
// project's machine: about 1 ms of real time, varying by half that.
const modelHop, modelJitter = time.Millisecond, time.Millisecond / 2

// closedTruth is the engine model's capacity for a case by the
// concurrency axis's round rule (capacity.DefaultRoundBatch, the median
// over 200 rounds of each round's TTFT p90), with that median at every
// level from 1 to the case's top, in ms at the case's scale.
func closedTruth(tb testing.TB, tc coverageCase) (int, []float64) {
	tb.Helper()
	p, err := sim.LookupProfile(tc.profile)
	if err != nil {
		tb.Fatal(err)
	}
	r := sim.ClosedRound{PromptTokens: 800, MaxTokens: 256, Hop: modelHop, Jitter: modelJitter}
	c, at := sim.ModelClosedRoundCapacity(p.Scaled(tc.scale), 0.9, time.Duration(tc.boundMs*float64(time.Millisecond)),
		sim.ClosedRoundRule{Batch: capacity.DefaultRoundBatch}, r, int(tc.hi), 200, 1)
	var ms []float64
	for _, d := range at {
		ms = append(ms, float64(d)/1e6)
	}
	return c, ms
}

var coverageCases = []coverageCase{
	{"sim-truth-llamacpp-rtx5090-q4km.txt", "llamacpp-rtx5090-q4km", "ttft_p90<=1s", 0.1, 100, 1, 16, 6, 6, [2]float64{4, 8}},
	// vLLM's TTFT grows by ~14 ms per user with no jump, so at time scale
	// 0.1 the levels lie 1.4 ms of real time apart, within what a busy
	// machine adds (sim-truth-vllm-rtx5090-bf16-scale0.1.txt); at 0.5
	// they lie 7 ms apart. The range starts at 3 users: a round of one
	// user is 52 requests one after another, 10 s at that scale.
	// A search takes about 2 minutes (its rounds run at half the
	// profile's pace). With rounds pooled its coverage was 86%
	// (18 of 21 counted runs); judged per round, docs/CAPACITY.md.
	{"sim-truth-vllm-rtx5090-bf16.txt", "vllm-rtx5090-bf16", "ttft_p90<=134ms", 0.5, 67, 3, 12, 6, 6, [2]float64{}},
}

// The coverage of the search against the running simulator is a
// measurement, not a test: each run is a real-time search of a minute or
// more, and a claim of 95% coverage needs tens of them. It is kept as two
// benchmarks, one seeded run per iteration, reporting the share of
// counted runs whose interval held the truth:
//
//	go test -run '^$' -bench 'CapacityCoverage|RateCoverage' -benchtime 60x -timeout 150m ./capacity/live/
//
// (LLMREPLAY_COVERAGE_FIRST=K starts at seed K, so a later set sends
// prompts no earlier set sent). Each fails below 95% once it has counted
// 20 runs. What always runs: the truths each case is judged against
// (TestCoverageTruths) and one short search through the same machinery
// (TestSearchAgainstSimulator).
//
// A busy machine slows the in-process simulator (never speeds it up):
// its steps end late, and every token a late step makes reaches the
// client that much later. The rule for leaving a run out is stated on the
// simulator's own lateness counter (Server.Lateness, summed over steps
// beyond 1 ms each) per step: a run whose mean step lag (MeanStepLag)
// exceeds busyShare of the SLO's bound is reported and not counted. At
// 5% that is 5 ms of real time for llama.cpp's 100 ms bound, against
// 9.4 ms between its true level's p90 (90.6 ms) and the bound, and
// 3.35 ms for vLLM's 67 ms against 3.9 ms: a machine that lengthens the
// mean latency by less cannot move the true level across the bound by
// the mean alone, and one that lengthens it by more measured itself.
// (The first rule, summed lateness above the run's wall time, left out
// runs whose steps were late by a millisecond of real time on average,
// a twentieth of the margin: 17 of 36 runs, 16 of which covered.)

// firstSeed is the first run's seed: 1, or LLMREPLAY_COVERAGE_FIRST, so a
// later set of runs sends prompts no earlier set sent.
func firstSeed(tb testing.TB) int64 {
	v := os.Getenv("LLMREPLAY_COVERAGE_FIRST")
	if v == "" {
		return 1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		tb.Fatalf("LLMREPLAY_COVERAGE_FIRST=%q: give the first seed, 1 or more", v)
	}
	return n
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// coverageTally counts seeded runs of one case: those the machine let
// keep the simulator's pace (counted), and of those the ones whose
// interval held the truth.
type coverageTally struct {
	covered, counted, busy, coveredAll, runs int
	requests                                 []int
}

// add judges one run against the truth (as a string for the log) and
// bound, logs it, and counts it.
func (c *coverageTally) add(tb testing.TB, res *Result, ok bool, truth string, boundMs float64) {
	tb.Helper()
	c.runs++
	if ok {
		c.coveredAll++
	}
	var probes []string
	for _, p := range res.Probes {
		probes = append(probes, fmt.Sprintf("%g:%s/%d", p.X, p.Verdict, p.Rounds))
	}
	line := fmt.Sprintf("%s %g [%g, %g], probes %v, %d requests, %v, simulator late %v (mean step lag %v), load %s: covers %s: %v",
		res.Outcome, res.Answer, res.Lo, res.Hi, probes, res.Requests, res.Elapsed.Round(time.Millisecond), res.SimLate.Round(time.Millisecond), res.MeanStepLag().Round(time.Microsecond), loadavg(), truth, ok)
	if lag := res.MeanStepLag(); lag > time.Duration(busyShare*boundMs*float64(time.Millisecond)) {
		c.busy++
		tb.Logf("%s; mean step lag above %g%% of the bound: machine too busy, not counted", line, 100*busyShare)
		return
	}
	c.counted++
	c.requests = append(c.requests, res.Requests)
	if ok {
		c.covered++
	}
	tb.Logf("%s", line)
}

// report logs the tally and reports the coverage; below 95% over 20 or
// more counted runs is a failure.
func (c *coverageTally) report(b *testing.B, what string) {
	b.Logf("%s: %d of %d counted runs covered the truth (%d of all %d runs; %d not counted: machine too busy); requests per counted search %v",
		what, c.covered, c.counted, c.coveredAll, c.runs, c.busy, c.requests)
	if c.counted == 0 {
		return
	}
	b.ReportMetric(100*float64(c.covered)/float64(c.counted), "%covered")
	b.ReportMetric(float64(c.counted), "counted")
	if c.counted >= 20 && float64(c.covered) < 0.95*float64(c.counted) {
		b.Errorf("coverage %d/%d below 95%%", c.covered, c.counted)
	}
}

// TestCoverageTruths: the truths the coverage benchmarks judge against,
// from the engine model: each concurrency case's capacity by the round
// rule is the one the case states, and each rate case's true rate lies
// inside its search range.
func TestCoverageTruths(t *testing.T) {
	for _, tc := range coverageCases {
		if truth, at := closedTruth(t, tc); truth != tc.truth {
			t.Errorf("%s: the engine model by the round rule says %d users at %g ms (median round p90 by level %.1f), the case expects %d", tc.profile, truth, tc.boundMs, at, tc.truth)
		}
	}
	for _, rc := range rateCases {
		if truth := rateTruth(t, rc); truth <= rc.lo || truth >= rc.hi {
			t.Errorf("%s: the model's true rate %g lies outside the search range %g..%g", rc.name, truth, rc.lo, rc.hi)
		}
	}
}

// TestSearchAgainstSimulator: one short search through the machinery the
// coverage benchmarks run (the llama.cpp case's profile, time scale and
// SLO over its quick range, 32 output tokens to keep it to seconds): it
// answers inside its range with the answer inside its interval, every
// probe ran the 8 rounds a decision needs (or stopped the search), each
// round is a phase of the trace, the simulator's lateness was measured,
// and the trace alone gives the same answer again (Reanalyse). Whether
// the interval holds the truth is the benchmark's question: any one run
// of a 95% interval may miss.
func TestSearchAgainstSimulator(t *testing.T) {
	tc := coverageCases[0]
	slo, err := capacity.ParseSLO(tc.slo)
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "c.trace.zst")
	res, err := Run(context.Background(), Config{
		Search: capacity.Config{SLO: slo, Lo: tc.quick[0], Hi: tc.quick[1]}, Axis: AxisConcurrency,
		Profile: tc.profile, TimeScale: tc.scale, MaxTokens: 32, Seed: firstSeed(t), Trace: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Simulated || res.TimeScale != tc.scale || res.MeanStepLag() < 0 {
		t.Errorf("simulated %v, time scale %g, mean step lag %v", res.Simulated, res.TimeScale, res.MeanStepLag())
	}
	switch res.Outcome {
	case capacity.Found:
		// The answer lies in the range and in its interval. The interval's
		// lower end is a level of the range or 0: when the lowest level
		// stayed undecided (a loaded machine widens every round's spread),
		// the search says the capacity may lie below the range, and two
		// loaded runs said so ([0, 4] answering 4, [0, 7] answering 5).
		lo := res.Lo == 0 || res.Lo >= tc.quick[0]
		if res.Answer < res.Lo || res.Answer > res.Hi || res.Answer < tc.quick[0] || res.Answer > tc.quick[1] || !lo {
			t.Errorf("answer %g, interval [%g, %g], range %g..%g", res.Answer, res.Lo, res.Hi, tc.quick[0], tc.quick[1])
		}
	case capacity.AllMeet, capacity.NoneMeets, capacity.NoDecision:
		t.Logf("outcome %s (%s)", res.Outcome, res.Reason) // 32 tokens move the truth; any honest outcome is the mechanism's
	default:
		t.Errorf("outcome %s (%s)", res.Outcome, res.Reason)
	}
	rounds := 0
	for i, p := range res.Probes {
		rounds += p.Rounds
		if p.Rounds < 8 && i != len(res.Probes)-1 {
			t.Errorf("probe at %g ran %d rounds, fewer than the 8 a decision needs", p.X, p.Rounds)
		}
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	phases := len(r.Header().Phases)
	r.Close()
	if phases != rounds || rounds == 0 {
		t.Errorf("the trace holds %d phases for %d probe rounds", phases, rounds)
	}
	again, err := Reanalyse(tr, nil, analyze.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Outcome != res.Outcome || again.Answer != res.Answer || again.Lo != res.Lo || again.Hi != res.Hi {
		t.Errorf("the trace says %s %g [%g, %g], the run %s %g [%g, %g]", again.Outcome, again.Answer, again.Lo, again.Hi, res.Outcome, res.Answer, res.Lo, res.Hi)
	}
}

// BenchmarkCapacityCoverage: the search against each calibrated profile
// (at its sweep's time scale, the default 800-token prompts and 256
// tokens out, over the case's full range) lands its 95% interval on the
// capacity the dense sweep of the same simulator found, which the engine
// model by the round rule reproduces (TestCoverageTruths,
// TestModelAgreesWithSweep). One seeded run per iteration.
func BenchmarkCapacityCoverage(b *testing.B) {
	for _, tc := range coverageCases {
		b.Run(tc.profile, func(b *testing.B) {
			slo, err := capacity.ParseSLO(tc.slo)
			if err != nil {
				b.Fatal(err)
			}
			var c coverageTally
			seed := firstSeed(b)
			for b.Loop() {
				res, err := Run(context.Background(), Config{
					Search: capacity.Config{SLO: slo, Lo: tc.lo, Hi: tc.hi}, Axis: AxisConcurrency,
					Profile: tc.profile, TimeScale: tc.scale, Seed: seed,
					Trace: filepath.Join(b.TempDir(), "c.trace.zst"),
				})
				if err != nil {
					b.Fatal(err)
				}
				seed++
				ok := res.Outcome == capacity.Found && res.Lo <= float64(tc.truth) && float64(tc.truth) <= res.Hi
				c.add(b, res, ok, strconv.Itoa(tc.truth), tc.boundMs)
			}
			c.report(b, tc.profile+" "+tc.slo)
		})
	}
}

// TestModelAgreesWithSweep: the two ground truths agree. The engine model
// run as the probe's rounds (sim.ModelClosedRounds, with the client hop
// measured on this machine: about 1 ms of real time, varying by 0.5 ms)
// gives each swept level's TTFT p90 within 10% (from 3 users on; one or
// two users' TTFT is mostly the hop, which the machine's load moves), and
// the same capacity at each coverage case's bound.
func TestModelAgreesWithSweep(t *testing.T) {
	scaleRE := regexp.MustCompile(`time scale ([\d.]+),`)
	for _, tc := range coverageCases {
		b, err := os.ReadFile(filepath.Join("..", "testdata", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		m := scaleRE.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s names no time scale", tc.golden)
		}
		scale, _ := strconv.ParseFloat(string(m[1]), 64)
		if scale != tc.scale {
			t.Fatalf("%s: time scale %g, the case says %g", tc.golden, scale, tc.scale)
		}
		p, err := sim.LookupProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		p = p.Scaled(scale)
		r := sim.ClosedRound{PromptTokens: 800, MaxTokens: 256, Measured: 51, Hop: modelHop, Jitter: modelJitter}
		levels := readGolden(t, tc.golden)
		if sw, decided := sweepTruth(levels, tc.boundMs); !decided || sw != tc.pooled {
			t.Errorf("%s: the sweep says %d (decided %v) at %g ms, the case %d", tc.golden, sw, decided, tc.boundMs, tc.pooled)
		}
		modelTruth := levels[0].users - 1 // the levels below the sweep's first meet it, as sweepTruth takes them
		for _, g := range levels {
			r.Users = g.users
			v := float64(sim.Quantile(sim.ModelClosedRounds(p, r, 20, uint64(g.users)), 0.9)) / 1e6
			t.Logf("%s %d users: model %.1f ms, sweep %.1f ms [%.1f, %.1f]", tc.profile, g.users, v, g.p90, g.lo, g.hi)
			if g.users >= 3 && math.Abs(v-g.p90) > 0.1*g.p90 {
				t.Errorf("%s %d users: model %.1f ms, sweep %.1f ms: more than 10%% apart", tc.profile, g.users, v, g.p90)
			}
			if v <= tc.boundMs && modelTruth == g.users-1 {
				modelTruth = g.users
			}
		}
		if modelTruth != tc.pooled {
			t.Errorf("%s at %g ms: the model says %d users, the sweep %d", tc.profile, tc.boundMs, modelTruth, tc.pooled)
		}
	}
}

// rateCase is a rate-axis coverage case: llama.cpp at time scale 0.1
// under ttft_p90<=1s (100 ms at that scale), whose true rate under the
// round rule (round duration, the median over rounds of each round's
// p90) the engine model gives (sim.ModelOpenRoundCapacity).
type rateCase struct {
	name        string
	round       time.Duration // the round duration, in the profile's time
	lo, hi, res float64
}

var rateCases = []rateCase{
	// The default rule (20 s rounds): true rate 38.3 req/s at this scale
	// (3.8 at the profile's pace). A search takes about 5 probes of 8–12
	// rounds, 2–3 minutes.
	{"20s-rounds", DefaultRoundDuration, 24, 48, 2},
	// 5 s rounds: about a minute a search. The
	// true rate is 60.0 req/s, where a round's 31st measured request
	// (⌈60.1·0.5⌉) first joins a queue that has grown past the bound; the
	// range's levels (44, 88, 66, 55, 60.5, …) stay off that edge.
	{"5s-rounds", 5 * time.Second, 44, 88, 3},
}

const (
	rateProfile = "llamacpp-rtx5090-q4km"
	rateSLO     = "ttft_p90<=1s"
	rateScale   = 0.1
	rateBoundMs = 100.0
)

// rateTruth is the engine model's true rate for a case: the probe's
// rounds (capacity.DefaultRoundBatch, the case's round at its scale, the
// client's hop of about 1 ms measured on this machine) over 200 rounds,
// bisected to 0.05 req/s.
func rateTruth(tb testing.TB, rc rateCase) float64 {
	tb.Helper()
	p, err := sim.LookupProfile(rateProfile)
	if err != nil {
		tb.Fatal(err)
	}
	u := sim.OpenRoundRule{Batch: capacity.DefaultRoundBatch, Seconds: rc.round.Seconds() * rateScale}
	r := sim.OpenRound{PromptTokens: 800, MaxTokens: 256, Hop: time.Millisecond, Jitter: time.Millisecond / 2}
	return sim.ModelOpenRoundCapacity(p.Scaled(rateScale), 0.9, time.Duration(rateBoundMs*float64(time.Millisecond)), u, r, rc.lo, rc.hi, 0.05, 200, 1)
}

// BenchmarkRateCoverage: the rate axis's search against the llama.cpp
// profile lands its 95% interval on the engine model's true rate under
// the same round rule, for each round duration; one seeded run per
// iteration, with the same rule for a machine too busy (busyShare) as
// BenchmarkCapacityCoverage.
func BenchmarkRateCoverage(b *testing.B) {
	slo, err := capacity.ParseSLO(rateSLO)
	if err != nil {
		b.Fatal(err)
	}
	for _, rc := range rateCases {
		b.Run(rc.name, func(b *testing.B) {
			truth := rateTruth(b, rc)
			var c coverageTally
			seed := firstSeed(b)
			for b.Loop() {
				res, err := Run(context.Background(), Config{
					Search: capacity.Config{SLO: slo, Lo: rc.lo, Hi: rc.hi, Resolution: rc.res}, Axis: AxisRate,
					Profile: rateProfile, TimeScale: rateScale, RoundDuration: rc.round, Seed: seed,
					Trace: filepath.Join(b.TempDir(), "r.trace.zst"),
				})
				if err != nil {
					b.Fatal(err)
				}
				seed++
				ok := res.Lo <= truth && truth <= res.Hi && (res.Outcome == capacity.Found || res.Outcome == capacity.Budget)
				c.add(b, res, ok, fmt.Sprintf("%.2f", truth), rateBoundMs)
			}
			c.report(b, fmt.Sprintf("rate %s %s %s", rc.name, rateProfile, rateSLO))
		})
	}
}
