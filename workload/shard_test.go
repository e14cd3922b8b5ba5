package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// TestShardUnionIsTheWorkload checks, for every schedule kind and several
// shard counts, that the shards' requests are disjoint, that their union is
// exactly the workload's requests, and that each kind splits as documented.
func TestShardUnionIsTheWorkload(t *testing.T) {
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  BuildConfig
	}{
		{"burst", BuildConfig{Schedule: "burst:1,4,32", Repeats: 2}},
		{"closed", BuildConfig{Schedule: "closed:3,8", Requests: 17}},
		{"rate", BuildConfig{Schedule: "rate:50", Requests: 41, Arrival: "poisson"}},
		{"trace", BuildConfig{Schedule: "trace:testdata/traces/burstgpt.csv", Window: "100:150"}},
	}
	for _, c := range cases {
		c.cfg.Tok = tok
		c.cfg.InputTokens = []int{100}
		c.cfg.MaxTokens = 8
		wl, err := Build(c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, n := range []int{1, 2, 3, 4, 7} {
			seen := map[int]int{}
			perPhase := make([]int, len(wl.Header.Phases))
			workers := make([]int, len(wl.Header.Phases))
			for i := 0; i < n; i++ {
				part, err := Shard(wl, ShardSpec{Index: i, Count: n})
				if err != nil {
					t.Fatal(err)
				}
				if len(part.Header.Phases) != len(wl.Header.Phases) {
					t.Fatalf("%s %d/%d: %d phases, want %d", c.name, i, n, len(part.Header.Phases), len(wl.Header.Phases))
				}
				if part.Header.Requests != len(part.Requests) {
					t.Errorf("%s %d/%d: header says %d requests, holds %d", c.name, i, n, part.Header.Requests, len(part.Requests))
				}
				for pi, ph := range part.Header.Phases {
					perPhase[pi] += ph.Requests
					workers[pi] += ph.Concurrency
				}
				for _, r := range part.Requests {
					seen[r.Index]++
					orig := wl.Requests[r.Index]
					if r.Offset != orig.Offset || r.ID != orig.ID || r.Phase != orig.Phase {
						t.Errorf("%s %d/%d: request %s changed on its way into the shard", c.name, i, n, r.ID)
					}
				}
				if !slices.IsSortedFunc(part.Requests, func(a, b Request) int { return a.Index - b.Index }) {
					t.Errorf("%s %d/%d: requests out of file order", c.name, i, n)
				}
			}
			if len(seen) != len(wl.Requests) {
				t.Errorf("%s over %d shards: %d distinct requests, want %d", c.name, n, len(seen), len(wl.Requests))
			}
			for idx, k := range seen {
				if k != 1 {
					t.Errorf("%s over %d shards: request %d sent %d times", c.name, n, idx, k)
				}
			}
			for pi, ph := range wl.Header.Phases {
				if perPhase[pi] != ph.Requests {
					t.Errorf("%s over %d shards: phase %d has %d requests in all, want %d", c.name, n, pi, perPhase[pi], ph.Requests)
				}
				if (ph.Kind == KindBurst || ph.Kind == KindClosed) && workers[pi] != ph.Concurrency {
					t.Errorf("%s over %d shards: phase %d has %d streams in all, want %d", c.name, n, pi, workers[pi], ph.Concurrency)
				}
			}
		}
	}
}

// TestShardSplits checks the documented shares by hand: a burst of 32 over
// 4 shards is 8 each; 3 closed-loop workers over 4 shards leave the last
// shard idle; an open loop is dealt in arrival order.
func TestShardSplits(t *testing.T) {
	tok, _ := tokenize.Load("o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, InputTokens: []int{100}, MaxTokens: 8, Schedule: "burst:32", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		p, _ := Shard(wl, ShardSpec{i, 4})
		if p.Header.Phases[0].Concurrency != 8 || len(p.Requests) != 8 {
			t.Errorf("burst 32, shard %d/4: concurrency %d, %d requests; want 8 and 8", i, p.Header.Phases[0].Concurrency, len(p.Requests))
		}
		for _, r := range p.Requests {
			if r.Slot%4 != i {
				t.Errorf("shard %d/4 got slot %d", i, r.Slot)
			}
		}
	}
	wl, _ = Build(BuildConfig{Tok: tok, InputTokens: []int{100}, MaxTokens: 8, Schedule: "closed:3", Requests: 9})
	wantWorkers := []int{1, 1, 1, 0}
	wantReqs := []int{3, 3, 3, 0}
	for i := 0; i < 4; i++ {
		p, _ := Shard(wl, ShardSpec{i, 4})
		if p.Header.Phases[0].Concurrency != wantWorkers[i] || len(p.Requests) != wantReqs[i] {
			t.Errorf("closed 3, shard %d/4: %d workers, %d requests; want %d and %d", i, p.Header.Phases[0].Concurrency, len(p.Requests), wantWorkers[i], wantReqs[i])
		}
	}
	wl, _ = Build(BuildConfig{Tok: tok, InputTokens: []int{100}, MaxTokens: 8, Schedule: "rate:10", Arrival: "constant", Requests: 6})
	p, _ := Shard(wl, ShardSpec{1, 2})
	var offs []int64
	for _, r := range p.Requests {
		offs = append(offs, r.Offset)
	}
	// constant 10/s: offsets 0, 100, 200, 300, 400, 500 ms; shard 1 of 2
	// takes the 2nd, 4th and 6th arrivals.
	if want := []int64{100e6, 300e6, 500e6}; !slices.Equal(offs, want) {
		t.Errorf("rate 10/s shard 1/2 offsets %v, want %v", offs, want)
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in, err string
		want    ShardSpec
	}{
		{"0/4", "", ShardSpec{0, 4}},
		{" 3/4 ", "", ShardSpec{3, 4}},
		{"5/4", "does not exist", ShardSpec{}},
		{"-1/4", "does not exist", ShardSpec{}},
		{"0/0", "not from 1", ShardSpec{}},
		{"1", "not I/N", ShardSpec{}},
		{"a/b", "not I/N", ShardSpec{}},
	} {
		got, err := ParseShard(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseShard(%q) error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseShard: any string is a shard spec or a one-line error, and a
// spec it accepts is one Shard accepts.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "5/4", "-1/2", "1/0", "x", "1/", "/1", "9999/10000", "0/99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseShard(s)
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		if sp.Valid() != nil || sp.Index < 0 || sp.Index >= sp.Count || sp.Count > MaxShards {
			t.Fatalf("ParseShard(%q) accepted %+v", s, sp)
		}
	})
}
