package workload

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxShards bounds --shard's count: past it a shard of a burst of 32 holds
// nothing and the merge's per-shard bookkeeping is all that grows.
const MaxShards = 10_000

// ShardSpec names one part of a workload split over Count client machines.
type ShardSpec struct {
	Index int // from 0
	Count int
}

// String is the spec as the user writes it, "I/N".
func (s ShardSpec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Valid reports whether s names a shard: 0 ≤ Index < Count ≤ MaxShards.
func (s ShardSpec) Valid() error {
	if s.Count < 1 || s.Count > MaxShards {
		return fmt.Errorf("shard count %d is not from 1 to %d", s.Count, MaxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d does not exist: the index runs from 0 to %d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// ParseShard parses "I/N" (I from 0).
func ParseShard(s string) (ShardSpec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return ShardSpec{}, fmt.Errorf("shard %q is not I/N (for example 0/4: the first of 4 shards)", s)
	}
	sp := ShardSpec{Index: i, Count: n}
	return sp, sp.Valid()
}

// Shard returns the part of wl that shard s sends. The rule, per phase kind,
// is chosen so that every shard needs nothing but the workload file and its
// index (no coordinator during the run) and the union of all shards'
// requests is exactly wl's:
//
//   - burst: the requests whose barrier slot is ≡ Index (mod Count); a burst
//     of 32 over 4 shards is 8 per shard, each released at its shard's
//     phase start (the first phase of every shard starts at the common
//     start time, see replay's StartAt).
//   - closed: the workers are split the same way (worker w goes to shard
//     w mod Count), and the phase's requests are dealt round-robin over the
//     shards that got at least one worker, so each shard's share of the
//     requests matches its share of the workers.
//   - rate and trace (open loop): the requests in arrival order are dealt
//     round-robin; each keeps its offset, so the union of the shards'
//     arrival times is the original sequence, not Count independent
//     processes of rate R/Count.
//
// Phases keep their index and name; their Concurrency and Requests become
// this shard's share. A phase with no request for this shard stays, empty,
// so phase indices agree across shards. The header's Params and digest
// inputs are untouched: callers record Digest(wl) of the whole workload, not
// of the part.
func Shard(wl *Workload, s ShardSpec) (*Workload, error) {
	if err := s.Valid(); err != nil {
		return nil, err
	}
	out := &Workload{Header: wl.Header}
	out.Header.Phases = slices.Clone(wl.Header.Phases)
	byPhase := map[int][]int{} // phase index → positions in wl.Requests
	for i := range wl.Requests {
		byPhase[wl.Requests[i].Phase] = append(byPhase[wl.Requests[i].Phase], i)
	}
	for pi := range out.Header.Phases {
		ph := &out.Header.Phases[pi]
		idx := byPhase[ph.Index]
		var keep []int
		if ph.Sessions > 0 {
			keep = shardSessions(wl, ph, idx, s)
		} else {
			keep = deal(ph, idx, s, func(i int) *Request { return &wl.Requests[i] })
			slices.Sort(keep) // back to file order
		}
		ph.Requests = len(keep)
		for _, i := range keep {
			out.Requests = append(out.Requests, wl.Requests[i])
		}
	}
	// Requests stay in file order (phase by phase, as Build writes them).
	slices.SortStableFunc(out.Requests, func(a, b Request) int { return a.Index - b.Index })
	out.Header.Requests = len(out.Requests)
	return out, nil
}

// deal is Shard's rule for the members of one phase (requests, or
// sessions by their first turn), given in file order: burst, those whose
// slot is ≡ Index (mod Count); closed, round-robin over the shards that
// get a worker; open loop, round-robin in arrival order. It sets the
// phase's Concurrency to this shard's share (burst: its members) and
// returns the kept members, in arrival order for an open loop.
func deal[T any](ph *Phase, members []T, s ShardSpec, req func(T) *Request) []T {
	var kept []T
	switch ph.Kind {
	case KindBurst:
		for _, m := range members {
			if req(m).Slot%s.Count == s.Index {
				kept = append(kept, m)
			}
		}
		ph.Concurrency = len(kept)
	case KindClosed:
		workers := shareOf(ph.Concurrency, s)
		active := min(ph.Concurrency, s.Count)
		if workers > 0 {
			for k, m := range members {
				if k%active == s.Index {
					kept = append(kept, m)
				}
			}
		}
		ph.Concurrency = workers
	default: // rate, trace: open loop, dealt in arrival order
		sorted := slices.Clone(members)
		slices.SortStableFunc(sorted, func(a, b T) int { return cmp.Compare(req(a).Offset, req(b).Offset) })
		for k, m := range sorted {
			if k%s.Count == s.Index {
				kept = append(kept, m)
			}
		}
	}
	return kept
}

// shareOf is how many of n workers (or barrier members) shard s gets when
// member w goes to shard w mod Count.
func shareOf(n int, s ShardSpec) int {
	q, r := n/s.Count, n%s.Count
	if s.Index < r {
		return q + 1
	}
	return q
}

// shardSessions is Shard's rule for a phase of conversations: whole
// sessions are dealt, never turns (a turn needs its session's earlier
// answers, which only the shard that sent them has). Burst: the sessions
// whose slot is ≡ Index (mod Count); closed: the workers as for requests,
// the sessions round-robin over the shards with a worker; rate: the
// sessions in order of their first turn's offset, round-robin. It sets the
// phase's Sessions and Concurrency to this shard's share and returns the
// kept requests' positions in file order.
func shardSessions(wl *Workload, ph *Phase, idx []int, s ShardSpec) []int {
	var order []string
	turns := map[string][]int{}
	for _, i := range idx {
		id := wl.Requests[i].Session
		if _, ok := turns[id]; !ok {
			order = append(order, id)
		}
		turns[id] = append(turns[id], i)
	}
	first := func(id string) *Request { return &wl.Requests[turns[id][0]] }
	kept := deal(ph, order, s, first)
	ph.Sessions = len(kept)
	var keep []int
	for _, id := range kept {
		keep = append(keep, turns[id]...)
	}
	slices.Sort(keep)
	return keep
}
