package sim

import (
	"math"
	"sort"
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
	return p
}

// ModelClosedTTFT runs the engine model on a virtual clock for c
// closed-loop users, each sending its next request the moment its last one
// ends, with distinct prompts of promptTokens and maxTokens outputs, and
// returns the TTFT (send to first token, client network not modelled) of
// the n requests after the warm-up, which skips each user's first request.
// It is the capacity search's ground truth: it shares the engine model but
// none of the HTTP server, the client, the search or the statistics.
func ModelClosedTTFT(p Profile, c, promptTokens, maxTokens, n int) []time.Duration {
	core := newCore(p, false)
	type pending struct {
		s      *seq
		user   int
		sent   time.Duration
		arrive time.Duration
	}
	var queue []pending // sent, not yet at the engine, in arrival order
	owner := map[*seq]pending{}
	sentBy := make([]int, c) // requests each user has sent
	var out []time.Duration
	now := time.Duration(0)
	send := func(u int, at time.Duration) {
		sentBy[u]++
		queue = append(queue, pending{s: &seq{promptTokens: promptTokens, maxTokens: maxTokens}, user: u, sent: at, arrive: at + p.Overhead})
	}
	for u := range c {
		send(u, 0)
	}
	for len(out) < n {
		if core.idle() {
			// An idle engine waits BatchWindow after the first arrival.
			now = max(now, queue[0].arrive) + p.BatchWindow
		}
		for len(queue) > 0 && queue[0].arrive <= now {
			q := queue[0]
			queue = queue[1:]
			owner[q.s] = q
			core.enqueue(q.s)
		}
		d, em, ok := core.step()
		if !ok {
			continue
		}
		now += d
		for _, s := range em {
			q := owner[s]
			if s.produced == 1 && sentBy[q.user] > 1 {
				out = append(out, now-q.sent)
			}
			if s.produced >= s.maxTokens {
				delete(owner, s)
				send(q.user, now)
				sort.SliceStable(queue, func(i, j int) bool { return queue[i].arrive < queue[j].arrive })
			}
		}
	}
	return out[:n]
}

// ModelClosedCapacity is the largest number of closed-loop users, up to
// maxUsers, whose steady-state TTFT q-quantile stays at or below bound
// (0 when one user already exceeds it), from ModelClosedTTFT with n
// requests per level.
func ModelClosedCapacity(p Profile, q float64, bound time.Duration, promptTokens, maxTokens, maxUsers, n int) int {
	best := 0
	for c := 1; c <= maxUsers; c++ {
		t := ModelClosedTTFT(p, c, promptTokens, maxTokens, n)
		sort.Slice(t, func(i, j int) bool { return t[i] < t[j] })
		if t[int(math.Ceil(q*float64(n)))-1] <= bound {
			best = c
		}
	}
	return best
}
