package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Scaled returns the profile with every duration multiplied by f (f < 1
// runs faster). Every latency the model produces is a sum of these
// durations, so TTFT, TPOT and E2E scale exactly by f and an SLO bound
// scaled alike selects the same capacity: tests use it to search a
// profile in seconds instead of minutes.
func (p Profile) Scaled(f float64) Profile {
	s := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) * f)) }
	p.StepBase, p.StepPerSeq, p.StepCompute = s(p.StepBase), s(p.StepPerSeq), s(p.StepCompute)
	p.PrefillPerToken, p.Overhead, p.BatchWindow = s(p.PrefillPerToken), s(p.Overhead), s(p.BatchWindow)
	p.PrefillPerPair = s(p.PrefillPerPair)
	p.TimeScale = p.Scale() * f
	return p
}

// Scale is the time scale the profile runs at: 1 unless Scaled made it
// faster or slower.
func (p Profile) Scale() float64 {
	if p.TimeScale == 0 {
		return 1
	}
	return p.TimeScale
}

// ClosedRound is one closed-loop probe round as the capacity search runs
// it (capacity/live): Users workers start together and each sends its
// next request the moment its last one ended, until Users+Measured
// requests were sent; the first Users (each user's first request) are the
// warm-up and the Measured after them are judged.
type ClosedRound struct {
	Users        int
	PromptTokens int // distinct prompts: no prefix-cache hits
	MaxTokens    int
	Measured     int
	// Hop is the time from a client's send to the server holding the
	// request (the HTTP hop, parsing and tokenizing), on top of the
	// profile's Overhead and inside the TTFT the client measures; each
	// request adds its own Jitter, drawn uniformly from [0, Jitter]. A
	// client sends again the moment a response ends.
	//
	// Both are the client's and the machine's, not the profile's: a time
	// scale does not scale them. Measured against the simulator at time
	// scale 0.1 on the project's 2-core machine: a hop of about 1 ms
	// (10 ms of the profile's time), varying by a few tenths.
	Hop, Jitter time.Duration
}

// ModelClosedRounds runs the engine model on a virtual clock for rounds
// independent probe rounds r and returns the TTFT (client send to first
// token) of every measured request, pooled: the distribution a probe's
// percentile estimates. It is the capacity search's ground truth: it
// shares the engine model (core) with the simulator but none of its HTTP
// server, the client, the search or the statistics.
//
// Why the hop matters: the engine plans its next step the instant the
// last one ends, so a request sent in reply to a step's last token always
// misses that next step, and users whose requests end together stay in
// lockstep only while their hops are equal. With no hop and no jitter (as
// this model once had it) a closed loop re-sends on the very instant a
// step ends and keeps a lockstep no client produces; it found 34 users
// for llama.cpp at ttft_p90<=1s where the simulator holds 6
// (docs/CAPACITY.md). Rounds start all users together, as a probe does,
// so the measured requests include the clumps a simultaneous start
// leaves behind.
func ModelClosedRounds(p Profile, r ClosedRound, rounds int, seed uint64) []time.Duration {
	return pooled(rand.New(rand.NewPCG(seed, 0x5eed)), rounds, func(rng *rand.Rand) []time.Duration { return modelClosedRound(p, r, rng) })
}

// pooled runs rounds rounds of round, one after another on rng, and
// returns all their TTFTs together.
func pooled(rng *rand.Rand, rounds int, round func(*rand.Rand) []time.Duration) []time.Duration {
	var out []time.Duration
	for range rounds {
		out = append(out, round(rng)...)
	}
	return out
}

func modelClosedRound(p Profile, r ClosedRound, rng *rand.Rand) []time.Duration {
	total := r.Users + r.Measured
	next := 0 // the next request index to send
	send := func(u int, sent time.Duration) (arrival, bool) {
		if next >= total {
			return arrival{}, false
		}
		a := newArrival(p, r.PromptTokens, r.MaxTokens, next, u, sent, r.Hop, r.Jitter, rng)
		next++
		return a, true
	}
	var queue []arrival
	for u := range r.Users {
		a, _ := send(u, 0)
		queue = append(queue, a)
	}
	return drive(p, queue, r.Users, func(a arrival, now time.Duration) (arrival, bool) {
		return send(a.user, now)
	})
}

// arrival is one request of a model round: sent by user at sent, at the
// engine at arrive.
type arrival struct {
	s            *seq
	index, user  int
	sent, arrive time.Duration
	first        time.Duration // its first token, once drive has seen it
}

// newArrival is request index of user, sent at sent, reaching the engine
// a hop (plus up to jitter) and the profile's Overhead later.
func newArrival(p Profile, prompt, maxTokens, index, user int, sent, hop, jitter time.Duration, rng *rand.Rand) arrival {
	if jitter > 0 {
		hop += time.Duration(rng.Int64N(int64(jitter) + 1))
	}
	return arrival{s: &seq{promptTokens: prompt, maxTokens: maxTokens}, index: index, user: user, sent: sent, arrive: sent + hop + p.Overhead}
}

// drive runs the engine model from idle over queue (any order) and every
// request done adds when one finishes (done may be nil), until all are
// answered, and returns the TTFT (send to first token) of each request
// whose index is at least skip, in the order the first tokens came.
// Arrivals at the same instant join in the order they were queued.
func drive(p Profile, queue []arrival, skip int, done func(a arrival, now time.Duration) (arrival, bool)) []time.Duration {
	core := newCore(p, false)
	slices.SortStableFunc(queue, func(a, b arrival) int { return int(a.arrive - b.arrive) })
	owner := map[*seq]arrival{}
	var out []time.Duration
	now := time.Duration(0)
	for len(queue) > 0 || !core.idle() {
		if core.idle() {
			// An idle engine waits BatchWindow after the first arrival.
			now = max(now, queue[0].arrive) + p.BatchWindow
		}
		// A request joins the first step that starts at or after its
		// arrival, as in the simulator's driver (engine.run).
		for len(queue) > 0 && queue[0].arrive <= now {
			owner[queue[0].s] = queue[0]
			core.enqueue(queue[0].s)
			queue = queue[1:]
		}
		d, em, ok := core.step()
		if !ok {
			continue
		}
		now += d
		for _, s := range em {
			// Only a stream's first and last tokens concern its owner:
			// looking it up for every token was most of the model's time.
			if s.produced == 1 {
				a := owner[s]
				a.first = now
				owner[s] = a
				if a.index >= skip {
					out = append(out, now-a.sent)
				}
			}
			if s.produced < s.maxTokens {
				continue
			}
			a := owner[s]
			delete(owner, s)
			if done == nil {
				continue
			}
			if b, ok := done(a, now); ok {
				// After every queued arrival at or before b's.
				i := len(queue)
				for i > 0 && queue[i-1].arrive > b.arrive {
					i--
				}
				queue = slices.Insert(queue, i, b)
			}
		}
	}
	return out
}

// Quantile is the q-quantile of d by the tables' rule (the ⌈q·n⌉-th
// smallest); d is sorted in place.
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[max(0, int(math.Ceil(q*float64(len(d))))-1)]
}

// ModelClosedCapacity is the largest number of closed-loop users in
// 1..maxUsers whose pooled TTFT q-quantile over rounds model rounds stays
// at or below bound (0 when one user already exceeds it), with the
// quantile of every level.
func ModelClosedCapacity(p Profile, q float64, bound time.Duration, r ClosedRound, maxUsers, rounds int, seed uint64) (int, []time.Duration) {
	return capacityUpTo(maxUsers, bound, func(c int) time.Duration {
		r.Users = c
		return Quantile(ModelClosedRounds(p, r, rounds, seed+uint64(c)), q)
	})
}

// capacityUpTo is the largest c in 1..maxUsers such that level(k) is at
// or below bound for every k up to c (0 when level 1 exceeds it), with
// every level's value.
func capacityUpTo(maxUsers int, bound time.Duration, level func(c int) time.Duration) (int, []time.Duration) {
	best := 0
	var at []time.Duration
	for c := 1; c <= maxUsers; c++ {
		v := level(c)
		at = append(at, v)
		if v <= bound && best == c-1 {
			best = c
		}
	}
	return best, at
}

// ClosedRoundRule is the concurrency axis's round as the capacity search
// runs it (capacity/live, "rounds on the concurrency axis"): at c users
// the c warm-up requests (one per user at the start) and then
// c·max(2, ⌈Batch/c⌉) measured ones, which the users take from one queue
// as their last ends (about max(2, ⌈Batch/c⌉) each), every round from an
// idle engine, and a level is judged by the median over rounds of each
// round's own quantile.
type ClosedRoundRule struct {
	Batch int
}

// Round is the rule's round at c users.
func (u ClosedRoundRule) Round(c int, r ClosedRound) ClosedRound {
	r.Users = c
	r.Measured = c * max(2, (u.Batch+c-1)/c)
	return r
}

// ModelClosedRoundQuantiles runs rounds independent closed-loop rounds r,
// each from an idle engine, and returns each round's own q-quantile of
// its measured TTFTs (the ⌈q·k⌉-th smallest of its k): the per-round
// values whose median the concurrency axis's probes estimate.
func ModelClosedRoundQuantiles(p Profile, r ClosedRound, q float64, rounds int, seed uint64) []time.Duration {
	return roundQuantiles(rand.New(rand.NewPCG(seed, 0x5eed)), rounds, q, func(rng *rand.Rand) []time.Duration {
		return modelClosedRound(p, r, rng)
	})
}

// roundQuantiles runs rounds rounds of round, one after another on rng,
// and returns each round's own q-quantile.
func roundQuantiles(rng *rand.Rand, rounds int, q float64, round func(*rand.Rand) []time.Duration) []time.Duration {
	out := make([]time.Duration, 0, rounds)
	for range rounds {
		out = append(out, Quantile(round(rng), q))
	}
	return out
}

// ModelClosedRoundCapacity is the concurrency axis's true capacity under
// the round rule: the largest c in 1..maxUsers such that every level up
// to c has a median over rounds model rounds of each round's TTFT
// q-quantile at or below bound (0 when one user already exceeds it),
// with that median at every level. Level c draws from seed+c, as
// ModelClosedCapacity does.
func ModelClosedRoundCapacity(p Profile, q float64, bound time.Duration, u ClosedRoundRule, r ClosedRound, maxUsers, rounds int, seed uint64) (int, []time.Duration) {
	return capacityUpTo(maxUsers, bound, func(c int) time.Duration {
		return Quantile(ModelClosedRoundQuantiles(p, u.Round(c, r), q, rounds, seed+uint64(c)), 0.5)
	})
}

// OpenRound is one open-loop probe round of the rate axis as the capacity
// search runs it: Warmup+Measured requests with Poisson arrivals at Rate
// requests/s, the first Warmup (by arrival) skipped.
type OpenRound struct {
	Rate             float64
	PromptTokens     int
	MaxTokens        int
	Warmup, Measured int
	Hop, Jitter      time.Duration // as in ClosedRound
}

// ModelOpenRounds is ModelClosedRounds for the rate axis: rounds
// independent open-loop rounds, the pooled TTFTs of their measured
// requests.
func ModelOpenRounds(p Profile, r OpenRound, rounds int, seed uint64) []time.Duration {
	return pooled(rand.New(rand.NewPCG(seed, 0x0be7)), rounds, func(rng *rand.Rand) []time.Duration { return modelOpenRound(p, r, rng) })
}

func modelOpenRound(p Profile, r OpenRound, rng *rand.Rand) []time.Duration {
	total := r.Warmup + r.Measured
	queue := make([]arrival, 0, total)
	var sent time.Duration
	for i := range total {
		if i > 0 {
			sent += time.Duration(rng.ExpFloat64() / r.Rate * float64(time.Second))
		}
		queue = append(queue, newArrival(p, r.PromptTokens, r.MaxTokens, i, i, sent, r.Hop, r.Jitter, rng))
	}
	return drive(p, queue, r.Warmup, nil)
}

// ModelOpenCapacity is the request rate in [lo, hi] at which the pooled
// TTFT q-quantile of rounds model rounds reaches bound, found by
// bisection to within tol req/s (lo when lo already exceeds it, hi when hi
// still meets it). Every rate uses the same seed, so the curve it bisects
// is one draw of arrivals scaled in time.
func ModelOpenCapacity(p Profile, q float64, bound time.Duration, r OpenRound, lo, hi, tol float64, rounds int, seed uint64) float64 {
	meets := func(x float64) bool {
		r.Rate = x
		return Quantile(ModelOpenRounds(p, r, rounds, seed), q) <= bound
	}
	return bisect(meets, lo, hi, tol)
}

// OpenRoundRule is the rate axis's round as the capacity search runs it
// (capacity/live, "rounds of a stated duration"): at rate x a round's
// measured requests are max(Batch, ⌈x·Seconds⌉), after a warm-up of
// max(5, ⌈measured/9⌉) (the first 10% of the round, at least 5). Seconds
// is in the profile's time: a time-scaled profile takes it scaled alike.
type OpenRoundRule struct {
	Batch   int
	Seconds float64
}

// Round is the rule's round at rate x.
func (u OpenRoundRule) Round(x float64, r OpenRound) OpenRound {
	r.Rate = x
	r.Measured = max(u.Batch, int(math.Ceil(x*u.Seconds)))
	r.Warmup = max(5, int(math.Ceil(float64(r.Measured)/9)))
	return r
}

// ModelOpenRoundQuantiles runs rounds independent open-loop rounds r, each
// from an idle engine, and returns each round's own q-quantile of its
// measured TTFTs (the ⌈q·k⌉-th smallest of its k): the per-round values
// whose median the rate axis's probes estimate.
func ModelOpenRoundQuantiles(p Profile, r OpenRound, q float64, rounds int, seed uint64) []time.Duration {
	return roundQuantiles(rand.New(rand.NewPCG(seed, 0x0be7)), rounds, q, func(rng *rand.Rand) []time.Duration {
		return modelOpenRound(p, r, rng)
	})
}

// ModelOpenRoundCapacity is the rate axis's true capacity under the
// round rule: the rate in [lo, hi] at which the median over rounds model
// rounds of each round's TTFT q-quantile reaches bound, by bisection to
// within tol req/s (lo when lo already exceeds it, hi when hi still meets
// it). Every rate uses the same seed (common random numbers), so the
// curve it bisects moves with the rate, not with the draws.
func ModelOpenRoundCapacity(p Profile, q float64, bound time.Duration, u OpenRoundRule, r OpenRound, lo, hi, tol float64, rounds int, seed uint64) float64 {
	meets := func(x float64) bool {
		return Quantile(ModelOpenRoundQuantiles(p, u.Round(x, r), q, rounds, seed), 0.5) <= bound
	}
	return bisect(meets, lo, hi, tol)
}

// bisect finds where meets turns false in [lo, hi] to within tol: lo when
// lo already fails, hi when hi still meets, else the last bracket's middle.
func bisect(meets func(float64) bool, lo, hi, tol float64) float64 {
	if !meets(lo) {
		return lo
	}
	if meets(hi) {
		return hi
	}
	for hi-lo > tol {
		m := (lo + hi) / 2
		if meets(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}
