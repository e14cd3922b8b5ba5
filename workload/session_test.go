package workload

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// goldenSessions is the command behind testdata/golden-v1.2.workload.zst:
// two bursts of 2 sessions of 2 or 3 turns, a 40-token shared system
// prompt and uniform think times.
var goldenSessions = BuildConfig{
	Tokenizer: "o200k_base", InputTokens: []int{64}, MaxTokens: 16, Schedule: "burst:2", Repeats: 2,
	Turns: "2..3", ThinkTime: "10ms..50ms", SystemTokens: 40, Seed: 5,
}

const goldenV12 = "testdata/golden-v1.2.workload.zst"

// TestGoldenV12 proves that a 1.2 file (sessions) reads with its session
// structure, and that today's builder makes the same content from the
// same command.
func TestGoldenV12(t *testing.T) {
	wl := openGolden(t, goldenV12, goldenSessions)
	if wl.Header.Minor != 2 || wl.Header.Params.Turns != "2..3" || wl.Header.Params.SystemTokens != 40 {
		t.Fatalf("golden v1.2 header %+v", wl.Header)
	}
	if !wl.HasSessions() || wl.Header.Phases[0].Sessions != 2 {
		t.Fatalf("golden v1.2 phases %+v", wl.Header.Phases)
	}
	rebuildsGolden(t, wl, goldenSessions, "sessions workload")
	// The older goldens keep their versions: sessions are a step only
	// for workloads that have them.
	old, err := Open(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	if old.Header.Minor != 0 || old.HasSessions() {
		t.Fatalf("golden v1 reads as %d.%d with sessions %v", old.Header.Major, old.Header.Minor, old.HasSessions())
	}
}

// TestSessionsLayout checks the structure a session workload promises:
// turns in order right after one another, exact lengths for what the
// workload writes, the shared system prompt identical everywhere, think
// times within the range.
func TestSessionsLayout(t *testing.T) {
	wl, err := Build(goldenSessions)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	system := ""
	prev := map[string]int{}
	perPhase := map[int]int{}
	for _, r := range wl.Requests {
		perPhase[r.Phase]++
		if r.Session == "" || r.Turn < 1 {
			t.Fatalf("request %s has no session/turn", r.ID)
		}
		if r.Turn != prev[r.Session]+1 {
			t.Fatalf("request %s is turn %d after turn %d", r.ID, r.Turn, prev[r.Session])
		}
		prev[r.Session] = r.Turn
		last := r.Messages[len(r.Messages)-1]
		if got := tok.Count(last.Content); got != r.InputTokens {
			t.Fatalf("request %s: last message %d tokens, recorded %d", r.ID, got, r.InputTokens)
		}
		if r.Turn == 1 {
			if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Think != 0 || r.InputTokens != 64 {
				t.Fatalf("turn 1 %s: %+v", r.ID, r)
			}
			if n := tok.Count(r.Messages[0].Content); n != 40 {
				t.Fatalf("system prompt of %d tokens, want 40", n)
			}
			if system == "" {
				system = r.Messages[0].Content
			} else if r.Messages[0].Content != system {
				t.Fatal("sessions have different system prompts")
			}
			continue
		}
		if len(r.Messages) != 1 || last.Content != FollowUp || r.Salt != (Span{}) {
			t.Fatalf("turn %d %s: %+v", r.Turn, r.ID, r)
		}
		if r.Think < int64(10*time.Millisecond) || r.Think > int64(50*time.Millisecond) {
			t.Fatalf("think time %d outside 10ms..50ms", r.Think)
		}
	}
	if len(prev) != 4 {
		t.Fatalf("%d sessions, want 4", len(prev))
	}
	for pi, ph := range wl.Header.Phases {
		if ph.Requests != perPhase[pi] || ph.Sessions != 2 {
			t.Fatalf("phase %d announces %d requests / %d sessions, holds %d", pi, ph.Requests, ph.Sessions, perPhase[pi])
		}
	}
}

func TestSessionSchedules(t *testing.T) {
	for _, tc := range []struct {
		cfg            BuildConfig
		sessions, reqs int
	}{
		{BuildConfig{InputTokens: []int{64}, Schedule: "closed:3", Turns: "4"}, 12, 48},
		{BuildConfig{InputTokens: []int{64}, Schedule: "closed:3", Turns: "4", Sessions: 5}, 5, 20},
		{BuildConfig{InputTokens: []int{64}, Schedule: "rate:2", Turns: "2", Sessions: 7, Arrival: "constant"}, 7, 14},
		{BuildConfig{InputTokens: []int{64}, Schedule: "burst:3", Turns: "1", Repeats: 1}, 3, 3},
		{BuildConfig{InputTokens: []int{64}, Schedule: "burst:3", Turns: "2:2", ThinkTime: "1s:2s", Repeats: 1}, 3, 6},
	} {
		wl, err := Build(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		ph := wl.Header.Phases[0]
		if ph.Sessions != tc.sessions || ph.Requests != tc.reqs || wl.Header.Minor != 2 {
			t.Fatalf("%+v: phase %+v (minor %d), want %d sessions / %d requests", tc.cfg, ph, wl.Header.Minor, tc.sessions, tc.reqs)
		}
		if tc.cfg.Arrival == "constant" {
			// Sessions start at the rate's offsets: 0, 0.5 s, 1 s, …
			n := 0
			for _, r := range wl.Requests {
				if r.Turn == 1 {
					if r.Offset != int64(n)*int64(500*time.Millisecond) {
						t.Fatalf("session %d starts at %d", n, r.Offset)
					}
					n++
				} else if r.Offset != 0 {
					t.Fatalf("turn %d has an offset", r.Turn)
				}
			}
		}
		buf := encoded(t, wl)
		back, err := Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wl, back); diff != "" {
			t.Fatal(diff)
		}
	}
}

func TestSessionBadInput(t *testing.T) {
	base := BuildConfig{InputTokens: []int{64}, Schedule: "burst:2", Repeats: 1}
	for _, tc := range []struct {
		mod  func(*BuildConfig)
		want string
	}{
		{func(c *BuildConfig) { c.Turns = "0" }, "Turns \"0\" has a session of no turns"},
		{func(c *BuildConfig) { c.Turns = "8..2" }, "runs backwards"},
		{func(c *BuildConfig) { c.Turns = "two" }, "is not a number of turns"},
		{func(c *BuildConfig) { c.Turns = "2..x" }, "is not a number of turns"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "-1s" }, "is negative"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "1s..-2s" }, "is negative"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "fast" }, "is not a think time"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "3s..1s" }, "runs backwards"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "exp:-1s" }, "is negative"},
		{func(c *BuildConfig) { c.Turns = "2"; c.ThinkTime = "2h" }, "more than 1h"},
		{func(c *BuildConfig) { c.ThinkTime = "1s" }, "add --turns"},
		{func(c *BuildConfig) { c.Turns = "2"; c.Shape = ShapeCompletion }, "needs chat"},
		{func(c *BuildConfig) { c.Turns = "2"; c.Sessions = 3 }, "does not apply to burst"},
		{func(c *BuildConfig) { c.Schedule = "closed:2"; c.Turns = "2"; c.Requests = 3 }, "use --sessions"},
		{func(c *BuildConfig) { c.SystemTokens = 3 }, "cannot hold the system prompt's opening"},
		{func(c *BuildConfig) { c.SystemTokens = -1 }, "out of range"},
	} {
		cfg := base
		tc.mod(&cfg)
		_, err := Build(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", cfg, err, tc.want)
		}
	}
}

// TestSessionDecodeRefuses edits a good session file by hand: every
// broken session structure is refused by name.
func TestSessionDecodeRefuses(t *testing.T) {
	raw, err := os.ReadFile(goldenV12)
	if err != nil {
		t.Fatal(err)
	}
	good, err := Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Workload)
		want string
	}{
		{func(w *Workload) { w.Requests[1].Turn = 3 }, "not right after its turn 2"},
		{func(w *Workload) { w.Requests[1].Turn = 1 }, "starts twice"},
		{func(w *Workload) { w.Requests[0].Turn = 0 }, "is turn 0"},
		{func(w *Workload) { w.Requests[1].Think = -5 }, "think time -5"},
		{func(w *Workload) { w.Requests[0].Session = "a\r\nX-Evil: 1" }, "session id"},
		{func(w *Workload) { w.Requests[1].Session = "" }, "no session"},
		{func(w *Workload) { w.Header.Phases[0].Sessions = 3 }, "announces 3 sessions"},
		{func(w *Workload) { w.Requests[1].Messages = nil; w.Requests[1].Prompt = "x" }, "has no messages"},
	} {
		wl := *good
		wl.Header.Phases = append([]Phase(nil), good.Header.Phases...)
		wl.Requests = append([]Request(nil), good.Requests...)
		tc.edit(&wl)
		buf := encoded(t, &wl)
		if _, err := Decode(buf); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// BenchmarkBuildSessions is the target's workload: 1,000 sessions of 8
// turns (closed loop of 100, 800-token first turns).
func BenchmarkBuildSessions(b *testing.B) {
	cfg := BuildConfig{Schedule: "closed:100", Sessions: 1000, Turns: "8", ThinkTime: "exp:1s", SystemTokens: 300}
	for b.Loop() {
		wl, err := Build(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(wl.Requests) != 8000 {
			b.Fatal(len(wl.Requests))
		}
	}
}

// FuzzSessionSpecs feeds --turns and --think-time any text: an error or
// a distribution whose draws stay within its bounds, never a panic.
func FuzzSessionSpecs(f *testing.F) {
	for _, s := range []string{"4", "2..8", "0", "-1", "8..2", "1..1000", "1001", "..", "2..", "x"} {
		f.Add(s, "1s..3s")
	}
	for _, s := range []string{"", "0", "2s", "exp:1s", "exp:", "1s..", "-1s", "3s..1s", "1h1ns", "500ms..500ms", "1e400s"} {
		f.Add("3", s)
	}
	f.Fuzz(func(t *testing.T, turns, think string) {
		rng := rand.New(rand.NewPCG(1, 2))
		if ts, err := parseTurns(turns); err == nil {
			if ts.lo < 1 || ts.hi < ts.lo || ts.hi > maxTurns {
				t.Fatalf("%q parsed to %+v", turns, ts)
			}
			if n := ts.draw(rng); n < ts.lo || n > ts.hi {
				t.Fatalf("%q drew %d", turns, n)
			}
		}
		if th, err := ParseThink(think); err == nil {
			for i := 0; i < 4; i++ {
				if d := th.draw(rng); d < 0 || d > int64(MaxThink) || th.kind == "uniform" && (d < th.lo || d > th.hi) {
					t.Fatalf("%q (%+v) drew %d", think, th, d)
				}
			}
		}
	})
}

// TestShardSessions: sharding deals whole sessions, never turns, and the
// shards together hold every request once, each shard a valid workload.
func TestShardSessions(t *testing.T) {
	for _, cfg := range []BuildConfig{
		{InputTokens: []int{64}, Schedule: "burst:5", Repeats: 1, Turns: "2..4"},
		{InputTokens: []int{64}, Schedule: "closed:3", Sessions: 7, Turns: "3"},
		{InputTokens: []int{64}, Schedule: "rate:5", Sessions: 9, Turns: "1..3"},
	} {
		wl, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]int{}
		owner := map[string]int{}
		for i := 0; i < 3; i++ {
			sh, err := Shard(wl, ShardSpec{Index: i, Count: 3})
			if err != nil {
				t.Fatal(err)
			}
			buf := encoded(t, sh)
			if _, err := Decode(buf); err != nil {
				t.Fatalf("%s shard %d does not decode: %v", cfg.Schedule, i, err)
			}
			for _, r := range sh.Requests {
				seen[r.Index]++
				if o, ok := owner[r.Session]; ok && o != i {
					t.Fatalf("%s: session %s split over shards %d and %d", cfg.Schedule, r.Session, o, i)
				}
				owner[r.Session] = i
			}
		}
		if len(seen) != len(wl.Requests) {
			t.Fatalf("%s: shards hold %d of %d requests", cfg.Schedule, len(seen), len(wl.Requests))
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("request %d in %d shards", i, n)
			}
		}
	}
}
