package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// model is a server whose latency at level x is base(x)·exp(σ·Z), Z
// standard normal, so its true q-quantile is base(x)·exp(σ·z_q) in closed
// form and the true capacity is known without running anything.
type model struct {
	rng    *rand.Rand
	base   func(x float64) float64
	sigma  float64
	failAt float64 // levels ≥ failAt fail every request (0: never)
	calls  int
}

func (m *model) Probe(_ context.Context, x float64, n int) ([]Sample, time.Duration, error) {
	m.calls++
	out := make([]Sample, n)
	for i := range out {
		if m.failAt > 0 && x >= m.failAt {
			continue
		}
		v := m.base(x) * math.Exp(m.sigma*m.rng.NormFloat64())
		out[i] = Sample{OK: true, Values: map[string]float64{"ttft": v}}
	}
	return out, time.Duration(n) * time.Second, nil
}

const z90 = 1.2815515655446004 // standard normal 0.9 quantile

func mustSLO(t *testing.T, s string) SLO {
	t.Helper()
	slo, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return slo
}

// TestConcurrencyCoverage: base(x) = 100·x ms, σ = 0.3, SLO ttft_p90 ≤ 1 s.
// True p90(x) = 100·x·e^(0.3·1.28155) = 146.93·x ms, so x ≤ 1000/146.93 =
// 6.806: the true capacity is 6 users (p90 881.6 ms at 6, 1028.5 ms at 7).
// Over 200 seeded searches the reported interval must hold 6 at least 95%
// of the time, and the search must use at most half the requests of a
// 1..64 sweep at the same per-point confidence (64 points × one batch).
func TestConcurrencyCoverage(t *testing.T) {
	const truth, runs = 6, 200
	slo := mustSLO(t, "ttft_p90<=1s")
	if got := 1000 / (100 * math.Exp(0.3*z90)); math.Floor(got) != truth {
		t.Fatalf("closed form gives %g", got)
	}
	covered, exact := 0, 0
	var reqs []int
	for seed := range runs {
		m := &model{rng: rand.New(rand.NewPCG(uint64(seed), 1)), base: func(x float64) float64 { return 100 * x }, sigma: 0.3}
		cfg := Config{SLO: slo, Lo: 1, Hi: 64, Integer: true}
		r, err := Search(context.Background(), cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != Found {
			t.Fatalf("seed %d: outcome %s (%s)", seed, r.Outcome, r.Reason)
		}
		if r.Lo <= truth && truth <= r.Hi {
			covered++
		}
		if r.Answer == truth {
			exact++
		}
		if r.Answer < r.Lo || r.Answer > r.Hi {
			t.Errorf("seed %d: answer %g outside its interval [%g, %g]", seed, r.Answer, r.Lo, r.Hi)
		}
		reqs = append(reqs, r.Requests)
	}
	rc, _ := cfg0(slo).Resolve()
	sweep := 64 * rc.Batch
	maxReq := 0
	for _, n := range reqs {
		maxReq = max(maxReq, n)
	}
	t.Logf("interval held the truth in %d/%d runs, point answer exact in %d; requests per search max %d vs %d for a 1..64 sweep (batch %d)", covered, runs, exact, maxReq, sweep, rc.Batch)
	if covered < runs*95/100 {
		t.Errorf("coverage %d/%d below 95%%", covered, runs)
	}
	if maxReq > sweep/2 {
		t.Errorf("a search used %d requests, more than half a 1..64 sweep (%d)", maxReq, sweep)
	}
}

func cfg0(slo SLO) Config { return Config{SLO: slo, Lo: 1, Hi: 64, Integer: true} }

// TestRateCoverage: an M/M/1-like latency base(x) = 50/(1 − x/10) ms with
// σ = 0.3 and ttft_p90 ≤ 500 ms: 50·1.46930/(1 − x/10) ≤ 500 gives
// x ≤ 10·(1 − 0.146930) = 8.5307 req/s.
func TestRateCoverage(t *testing.T) {
	const truth, runs = 8.5307, 200
	slo := mustSLO(t, "ttft_p90<=500ms")
	covered := 0
	for seed := range runs {
		m := &model{rng: rand.New(rand.NewPCG(uint64(seed), 2)), base: func(x float64) float64 { return 50 / (1 - x/10) }, sigma: 0.3}
		r, err := Search(context.Background(), Config{SLO: slo, Lo: 0.5, Hi: 9.9, Resolution: 0.1}, m)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != Found {
			t.Fatalf("seed %d: outcome %s (%s)", seed, r.Outcome, r.Reason)
		}
		if r.Hi-r.Lo > 1 {
			t.Errorf("seed %d: interval [%g, %g] wider than 1 req/s", seed, r.Lo, r.Hi)
		}
		if r.Lo <= truth && truth <= r.Hi {
			covered++
		}
	}
	t.Logf("rate interval held %g req/s in %d/%d runs", truth, covered, runs)
	if covered < runs*95/100 {
		t.Errorf("coverage %d/%d below 95%%", covered, runs)
	}
}

func TestOutcomes(t *testing.T) {
	lin := func(x float64) float64 { return 100 * x }
	cases := []struct {
		name     string
		slo      string
		cfg      Config
		failAt   float64
		want     Outcome
		lo, hi   float64
		inReason string
	}{
		// p90 at 1 user is 146.9 ms: nothing meets 10 ms.
		{"no load meets", "ttft_p90<=10ms", Config{Lo: 1, Hi: 64, Integer: true}, 0, NoneMeets, 0, 0, "already fails"},
		// p90 at 64 users is 9.4 s: everything meets 100 s.
		{"every load meets", "ttft_p90<=100s", Config{Lo: 1, Hi: 64, Integer: true}, 0, AllMeet, 64, 64, "every level"},
		// levels from 4 fail every request: errors come before the SLO (capacity 6).
		{"errors first", "ttft_p90<=1s", Config{Lo: 1, Hi: 64, Integer: true}, 4, ErrorsHit, 2, 64, "requests failed at 4"},
		// two probes' worth of requests: 1 and 2 pass, then the budget ends.
		{"budget", "ttft_p90<=1s", Config{Lo: 1, Hi: 64, Integer: true, MaxRequests: 2 * 51}, 0, Budget, 2, 64, "budget ran out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &model{rng: rand.New(rand.NewPCG(7, 7)), base: lin, sigma: 0.3, failAt: tc.failAt}
			cfg := tc.cfg
			cfg.SLO = mustSLO(t, tc.slo)
			r, err := Search(context.Background(), cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tc.want || r.Lo != tc.lo || r.Hi != tc.hi || !strings.Contains(r.Reason, tc.inReason) {
				t.Errorf("got %s [%g, %g] %q; want %s [%g, %g] containing %q", r.Outcome, r.Lo, r.Hi, r.Reason, tc.want, tc.lo, tc.hi, tc.inReason)
			}
			if cfg.MaxRequests > 0 && r.Requests > cfg.MaxRequests {
				t.Errorf("used %d requests over the budget %d", r.Requests, cfg.MaxRequests)
			}
		})
	}
}

// TestMinSamples: the 99% interval of a p90 needs n with 0.9ⁿ ≤ 0.005
// (the top order statistic must be a valid upper end): n ≥ ln 0.005 /
// ln 0.9 = 50.3, so 51.
func TestMinSamples(t *testing.T) {
	if got := MinSamples(0.9, 0.99); got != 51 {
		t.Errorf("MinSamples(0.9, 0.99) = %d, want 51", got)
	}
}

func TestParseSLO(t *testing.T) {
	slo := mustSLO(t, "ttft_p90<=2s, tpot_p90<50ms")
	if len(slo) != 2 || slo[0].Metric != "ttft" || slo[0].Q != 0.9 || slo[0].Bound != 2000 || slo[1].Metric != "tpot" || slo[1].Bound != 50 {
		t.Errorf("parsed %+v", slo)
	}
	if s := slo.Scaled(0.1); s[0].Bound != 200 || slo[0].Bound != 2000 {
		t.Errorf("Scaled: %+v, original %+v", s, slo)
	}
	// Any percentile the analysis reads: p95, p99.9 (quantile 0.999, the
	// decimal itself, not 99.9/100).
	slo = mustSLO(t, "ttft_p95<=1s,e2e_p99.9<=5s,tpot_p75<=40ms")
	if len(slo) != 3 || slo[0].Q != 0.95 || slo[1].Metric != "e2e" || slo[1].Q != 0.999 || slo[1].Bound != 5000 || slo[2].Q != 0.75 {
		t.Errorf("parsed %+v", slo)
	}
	bad := []struct{ in, want string }{
		{"", "empty SLO"},
		{"ttfx_p90<=1s", `no metric "ttfx_p90": use ttft, tpot or e2e`},
		{"ttft_p90<=1s,", "empty term"},
		{"ttft_p90<=5tok/s", "unit"},
		{"ttft_p90>=1s", "upper limit"},
		{"ttft<=1s", "percentile"},
		{"ttft_mean<=1s", "percentile"},
		{"ttft_p05<=1s", "shortest form"},
		{"per_stream_tps_p90<=10", "not a per-request latency"},
		{"ttft_p90{concurrency=4}<=1s", "selector"},
		{"ttft_p90<=0s", "positive"},
	}
	for _, b := range bad {
		_, err := ParseSLO(b.in)
		if err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSLO(%q) = %v, want one line containing %q", b.in, err, b.want)
		}
	}
}

func TestResolveRejects(t *testing.T) {
	slo := SLO{{Metric: "ttft", Q: 0.9, Bound: 1000}}
	for _, c := range []Config{
		{SLO: slo, Lo: 5, Hi: 4},
		{SLO: slo, Lo: 0, Hi: 4},
		{SLO: slo, Lo: 1.2, Hi: 1.8, Integer: true},
		{SLO: slo, Lo: 1, Hi: 4, Batch: 10},
		{Lo: 1, Hi: 4},
	} {
		if _, err := c.Resolve(); err == nil {
			t.Errorf("Resolve(%+v) accepted", c)
		}
	}
}

// proberFunc is a Prober from a function of the level.
type proberFunc func(x float64, n int) []Sample

func (f proberFunc) Probe(_ context.Context, x float64, n int) ([]Sample, time.Duration, error) {
	return f(x, n), time.Second, nil
}

// roundModel is an open-loop server whose requests of one round share
// the round's queue: every request of a round at level x has latency
// 100·x ms times the round's own factor F = exp(0.3·Z), Z standard
// normal, one draw per round. A round's p90 is 100·x·F, and the median
// over rounds of it is 100·x ms (F's median is 1): under ttft_p90<=1s
// the true rate is 10 req/s. Pooling a probe's requests as independent
// draws treats 20 copies of one value as 20 samples.
type roundModel struct{ rng *rand.Rand }

func (m *roundModel) Probe(_ context.Context, x float64, n int) ([]Sample, time.Duration, error) {
	v := 100 * x * math.Exp(0.3*m.rng.NormFloat64())
	out := make([]Sample, n)
	for i := range out {
		out[i] = Sample{OK: true, Values: map[string]float64{"ttft": v}}
	}
	return out, time.Second, nil
}

// TestPerRoundCoverage: rounds judged as independent draws (PerRound,
// both axes' rule) hold the true level of roundModel (10 req/s, or 10
// users on the integer concurrency axis, where the median round sits
// exactly on the bound and still meets it) in at least 95% of 200
// seeded searches; the same searches with the rounds' requests pooled
// do not (their intervals are about one round's factor wide, so they
// miss often). That is both axes' old failure in closed form.
func TestPerRoundCoverage(t *testing.T) {
	const truth, runs = 10.0, 200
	slo := mustSLO(t, "ttft_p90<=1s")
	for _, tc := range []struct{ perRound, integer bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		perRound := tc.perRound
		covered := 0
		for seed := range runs {
			m := &roundModel{rng: rand.New(rand.NewPCG(uint64(seed), 3))}
			cfg := Config{SLO: slo, Lo: 1, Hi: 64, Resolution: 0.5, PerRound: perRound, Integer: tc.integer}
			if !perRound {
				cfg.Batch = 51
			}
			r, err := Search(context.Background(), cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lo <= truth && truth <= r.Hi {
				covered++
			}
		}
		t.Logf("per round %v, integer levels %v: the interval held %g in %d/%d searches", perRound, tc.integer, truth, covered, runs)
		if perRound && covered < runs*95/100 {
			t.Errorf("per-round coverage %d/%d below 95%%", covered, runs)
		}
		if !perRound && covered >= runs*95/100 {
			t.Errorf("pooled coverage %d/%d: the model no longer shows the failure it stands for", covered, runs)
		}
	}
}

// TestJudgeRounds: nine rounds whose p90s are 10, 20, …, 90 ms (each of
// 10 requests: eight at 1 ms and two at the round's value v, so its p90,
// the 9th smallest, is v). Worked by hand: the median round is the 5th, 50 ms; the 99%
// order-statistic interval of a median of 9 is [x(1), x(9)] (P(B = 0) =
// 1/512 ≤ 0.005 < P(B ≤ 1) = 10/512, B ~ Binomial(9, 0.5)), so [10, 90]:
// a bound of 95 ms passes, 85 ms is undecided, 5 ms fails.
func TestJudgeRounds(t *testing.T) {
	var rounds [][]Sample
	for r := 1; r <= 9; r++ {
		v := float64(10 * r)
		var round []Sample
		for i := 0; i < 10; i++ {
			x := 1.0
			if i >= 8 {
				x = v
			}
			round = append(round, Sample{OK: true, Values: map[string]float64{"ttft": x}})
		}
		rounds = append(rounds, round)
	}
	for _, tc := range []struct {
		slo  string
		want Verdict
	}{{"ttft_p90<=95ms", Pass}, {"ttft_p90<=85ms", Undecided}, {"ttft_p90<=5ms", Fail}} {
		cfg, err := Config{SLO: mustSLO(t, tc.slo), Lo: 1, Hi: 2, PerRound: true}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		v, terms := JudgeSamples(cfg, rounds)
		if v != tc.want || terms[0].Value != 50 || terms[0].Lo != 10 || terms[0].Hi != 90 {
			t.Errorf("%s: %s %+v, want %s 50 [10, 90]", tc.slo, v, terms[0], tc.want)
		}
	}
	// Eight rounds are the fewest that can decide at 99%: 2/2⁸ ≤ 0.01.
	if MinRounds(0.99) != 8 {
		t.Errorf("MinRounds(0.99) = %d, want 8", MinRounds(0.99))
	}
}

// TestNoDecision: a search whose every probe stays undecided (its SLO
// asks a goodput no probe of 104 requests can show or rule out) rules
// out no level: the outcome says so, with the tested range as its
// bracket, not an interval reaching below it.
func TestNoDecision(t *testing.T) {
	probes := []Probe{{X: 1, Verdict: Undecided, Terms: []TermResult{{Value: 0.96}}}, {X: 16, Verdict: Undecided, Terms: []TermResult{{Value: 0.94}}}}
	cfg, err := Config{SLO: mustSLO(t, "goodput>=95%"), Lo: 1, Hi: 16, Integer: true}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(cfg, probes, BudgetReason)
	if r.Outcome != NoDecision || r.Lo != 1 || r.Hi != 16 || !strings.Contains(r.Reason, "no probe decided") {
		t.Errorf("got %s [%g, %g] %q", r.Outcome, r.Lo, r.Hi, r.Reason)
	}
}

// sizedModel's rounds measure 60 requests whatever the search asks, as a
// rate round of a stated duration does.
type sizedModel struct{ roundModel }

func (m *sizedModel) RoundSize(float64, int) int { return 60 }

func (m *sizedModel) Probe(ctx context.Context, x float64, _ int) ([]Sample, time.Duration, error) {
	return m.roundModel.Probe(ctx, x, 60)
}

// TestBudgetCountsRoundSize: --max-requests stops before a round that
// would pass it at the round's real size: with a budget of 150 and rounds
// of 60 (the batch is 20), two rounds run (120), not the seven a count
// by the batch would allow.
func TestBudgetCountsRoundSize(t *testing.T) {
	m := &sizedModel{roundModel{rng: rand.New(rand.NewPCG(1, 1))}}
	r, err := Search(context.Background(), Config{SLO: mustSLO(t, "ttft_p90<=1s"), Lo: 1, Hi: 64, PerRound: true, MaxRequests: 150}, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 120 || r.Outcome != NoDecision && r.Outcome != Budget {
		t.Errorf("%d requests, outcome %s (%s); want 120 and the budget", r.Requests, r.Outcome, r.Reason)
	}
}

// TestStrictBounds: a bound written < or > is judged and echoed as
// written: 50 ms does not meet tpot_p90<50ms (it meets <=50ms), and the
// SLO is said back with the same comparison, never a silent <=.
func TestStrictBounds(t *testing.T) {
	slo := mustSLO(t, "ttft_p90<500ms,tpot_p90<=50ms,goodput>90%")
	if got, want := slo.String(), "ttft_p90<500ms,tpot_p90<=50ms,goodput>90%"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := slo.Scaled(0.1).String(), "ttft_p90<50ms,tpot_p90<=5ms,goodput>90%"; got != want {
		t.Errorf("Scaled(0.1).String() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		term        Term
		v           float64
		within, out bool
	}{
		{slo[0], 500, false, true}, {slo[0], 499.9, true, false},
		{slo[1], 50, true, false}, {slo[1], 50.1, false, true},
		{slo[2], 0.9, false, true}, {slo[2], 0.91, true, false},
		{slo[0], math.NaN(), false, false},
	} {
		if c.term.within(c.v) != c.within || c.term.beyond(c.v) != c.out {
			t.Errorf("%s at %v: within %v beyond %v, want %v %v", c.term.Text, c.v, c.term.within(c.v), c.term.beyond(c.v), c.within, c.out)
		}
	}
	// An interval ending on the bound passes <=, and decides nothing for <.
	if fail, pass := decide(slo[1], TermResult{Lo: 40, Hi: 50}); fail || !pass {
		t.Errorf("tpot_p90<=50ms on [40, 50]: fail %v pass %v, want pass", fail, pass)
	}
	strict := slo[1]
	strict.Strict = true
	if fail, pass := decide(strict, TermResult{Lo: 40, Hi: 50}); fail || pass {
		t.Errorf("tpot_p90<50ms on [40, 50]: fail %v pass %v, want undecided", fail, pass)
	}
}
