package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// sessionLog is a hand-made Qwen-Bailian log (blocks of 16 tokens):
//
//	line chat parent  t (s) in   hash_ids          session, turn
//	1    7    -1      0     120  1–8               c7 turn 1
//	2    9    -1      0.25  64   20–23             c9 turn 1
//	3    12   7       1.5   200  1–13              c7 turn 2 (resends chat 7's blocks)
//	4    15   12      3     260  1–17              c7 turn 3
//	5    16   9       3.5   96   30–35             c9 turn 2 (shares no block with chat 9)
//	6    18   7       4     150  1–8, 40, 41       c18 turn 1: chat 7 continued a second time
//	7    20   -1      5     80   50–54             c20 turn 1
const sessionLog = "testdata/traces/bailian_sessions.jsonl"

func TestLogSessionsBuild(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog})
	if err != nil {
		t.Fatal(err)
	}
	h := wl.Header
	if h.Minor != 3 || h.Params.TraceFormat != TraceBailian || h.Params.BlockTokens != 16 {
		t.Fatalf("header %d.%d format %s block %d", h.Major, h.Minor, h.Params.TraceFormat, h.Params.BlockTokens)
	}
	if len(h.Phases) != 1 || h.Phases[0].Sessions != 4 || h.Phases[0].Context != ContextLog || h.Phases[0].Requests != 7 {
		t.Fatalf("phases %+v", h.Phases)
	}
	if !strings.Contains(h.Params.Note, "4 session(s) of up to 3 turns") || !strings.Contains(h.Params.Note, "1 continuation(s)") {
		t.Errorf("note %q should count the sessions and the branch", h.Params.Note)
	}
	type want struct {
		Session string
		Turn    int
		Offset  int64
		In      int
	}
	wants := []want{
		{"p000-c7", 1, 0, 120},
		{"p000-c9", 1, 250e6, 64},
		{"p000-c7", 2, 1500e6, 200},
		{"p000-c7", 3, 3000e6, 260},
		{"p000-c9", 2, 3500e6, 96},
		{"p000-c18", 1, 4000e6, 150},
		{"p000-c20", 1, 5000e6, 80},
	}
	var got []want
	for _, r := range wl.Requests {
		got = append(got, want{r.Session, r.Turn, r.Offset, r.InputTokens})
		if r.Think != 0 || len(r.Messages) != 1 || r.Messages[0].Role != "user" {
			t.Fatalf("%s: think %d, messages %+v: a log's turn is one whole user message sent at its time", r.ID, r.Think, r.Messages)
		}
		if n := tok.Count(r.Messages[0].Content); n != r.InputTokens {
			t.Fatalf("%s: %d tokens, want %d", r.ID, n, r.InputTokens)
		}
	}
	if diff := cmp.Diff(wants, got); diff != "" {
		t.Fatalf("sessions, turns, offsets and lengths (-want +got):\n%s", diff)
	}

	// Same hash block, same tokens, across the turns of a session and
	// across sessions: a turn's prompt starts with the tokens of every
	// block it shares with an earlier one, up to where the shorter prompt
	// stops (the last token of a block cut short may differ).
	kit, _ := newPromptKit(tok, 0, DefaultSaltWords, prefixMode{kind: "unique"})
	lead := kit.fixedTokens() - kit.tailTokens
	ids := func(i int) []int { return tok.Encode(wl.Requests[i].Messages[0].Content) }
	middle := func(i int) int { return wl.Requests[i].InputTokens - kit.fixedTokens() }
	for _, tc := range []struct {
		name   string
		a, b   int
		shared int // tokens of shared blocks past the lead
	}{
		{"c7 turn 1 → turn 2", 0, 2, middle(0)},
		{"c7 turn 2 → turn 3", 2, 3, middle(2)},
		{"c7 turn 1 → c18 (its second continuation)", 0, 5, middle(0)},
		{"c7 turn 2 → c18: blocks 1–8 shared", 2, 5, min(8*16, middle(5))},
	} {
		if n := commonPrefix(ids(tc.a), ids(tc.b)); n < lead+tc.shared-1 {
			t.Errorf("%s: prompts share %d tokens, want ≥ %d", tc.name, n, lead+tc.shared-1)
		}
	}
	// Chat 16 resends none of chat 9's blocks (its prompt changed at the
	// start, as a system prompt with the time in it does): no shared
	// tokens past the salt, so no cache hit the log did not have.
	if n := commonPrefix(ids(1), ids(4)); n != lead {
		t.Errorf("c9 turn 1 and turn 2 share %d tokens, want %d (their hash ids differ from the first block)", n, lead)
	}

	// It round-trips through the file format with its session structure.
	buf := encoded(t, wl)
	back, err := Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wl, back); diff != "" {
		t.Fatalf("round trip (-built +read):\n%s", diff)
	}
}

// A session is kept or dropped whole by its first turn's time, and
// offsets count from the window's start.
func TestLogSessionsWindowAndRepeats(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	for _, tc := range []struct {
		window   string
		repeats  int
		sessions []string
		offsets  []int64
		note     string
	}{
		{"0:1", 1, []string{"p000-c7", "p000-c9", "p000-c7", "p000-c7", "p000-c9"}, []int64{0, 250e6, 1500e6, 3000e6, 3500e6}, "2 session(s) of up to 3 turns"},
		{"1:", 1, []string{"p000-c18", "p000-c20"}, []int64{3000e6, 4000e6}, "2 session(s) of up to 1 turns from chat_id/parent_chat_id, each turn its whole prompt as logged, sent at its time or when the answer before it ended, whichever is later; 1 continuation(s)"},
		{"4.5:", 2, []string{"p000-c20", "p001-c20"}, []int64{500e6, 500e6}, "1 session(s) of up to 1 turns from chat_id/parent_chat_id, each turn its whole prompt as logged, sent at its time or when the answer before it ended, whichever is later"},
	} {
		wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog, Window: tc.window, Repeats: tc.repeats})
		if err != nil {
			t.Fatalf("window %s: %v", tc.window, err)
		}
		var ss []string
		var offs []int64
		for _, r := range wl.Requests {
			ss = append(ss, r.Session)
			offs = append(offs, r.Offset)
		}
		if !slices.Equal(ss, tc.sessions) || !slices.Equal(offs, tc.offsets) {
			t.Errorf("window %s ×%d: sessions %v offsets %v; want %v %v", tc.window, tc.repeats, ss, offs, tc.sessions, tc.offsets)
		}
		// The note counts what the window kept, branches included.
		if n := wl.Header.Params.Note; !strings.Contains(n, tc.note) || (!strings.Contains(tc.note, "continuation") && strings.Contains(n, "continuation")) {
			t.Errorf("window %s: note %q, want %q", tc.window, n, tc.note)
		}
	}
	if _, err := Build(BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog, Window: "5.5:"}); err == nil || !strings.Contains(err.Error(), "no session's first turn") {
		t.Errorf("a window without a first turn: %v", err)
	}
}

// Each broken session structure is refused with one line naming the line,
// the problem and the fix.
func TestLogSessionErrors(t *testing.T) {
	row := func(chat, parent, ts, turn string) string {
		return `{"chat_id": ` + chat + `, "parent_chat_id": ` + parent + `, "timestamp": ` + ts + `, "input_length": 100, "output_length": 5, "turn": ` + turn + `}` + "\n"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"orphan", row("1", "-1", "0.5", "1") + row("2", "5", "1.0", "2"), "line 2: parent_chat_id 5 is on no line of the log: restore the parent's line, set parent_chat_id to -1 to start a session there, or build with --orphan-turns first"},
		{"parent after child", row("2", "1", "0.5", "2") + row("1", "-1", "1.0", "1"), "line 1: parent_chat_id 1 is on line 2, after its child"},
		{"cycle", row("1", "2", "0.5", "2") + row("2", "1", "1.0", "3"), "line 1: parent_chat_id 2 is on line 2, after its child: put the log's lines in arrival order (a parent that comes later makes a cycle)"},
		{"own parent", row("1", "1", "0.5", "1"), "line 1: chat_id 1 names itself as its parent_chat_id"},
		{"duplicate", row("1", "-1", "0.5", "1") + row("1", "-1", "1.0", "1"), "line 2: chat_id 1 is used again (first on line 1)"},
		{"turn skips", row("1", "-1", "0.5", "1") + row("2", "1", "1.0", "3"), "line 2: turn 3 follows turn 1 of its parent chat 1 (line 1): a turn number is its parent's plus one"},
		{"turn repeats", row("1", "-1", "0.5", "2") + row("2", "1", "1.0", "2"), "turn 2 follows turn 2"},
		{"turn zero", row("1", "-1", "0.5", "0"), "line 1: turn 0 is not a turn number"},
		{"backwards", row("1", "-1", "2.5", "1") + row("2", "1", "1.25", "2"), "line 2: chat 2 at timestamp 1.25 comes before its parent chat 1 at 2.5 (line 1): timestamps go backwards within a session"},
		{"backwards deeper", row("1", "-1", "1", "1") + row("2", "1", "3", "2") + row("3", "2", "2", "3"), "line 3: chat 3 at timestamp 2 comes before its parent chat 2 at 3"},
		{"mixed", row("1", "-1", "0.5", "1") + `{"timestamp": 1, "input_length": 100, "output_length": 5}` + "\n", "line 2: some lines have a chat_id and others not"},
		{"parent without chat", `{"parent_chat_id": 3, "timestamp": 1, "input_length": 100, "output_length": 5}` + "\n", "parent_chat_id or turn without a chat_id"},
		{"chat -1", row("-1", "-1", "0.5", "1"), "chat_id -1 is reserved"},
		{"fractional id", row("1.5", "-1", "0.5", "1"), "chat_id 1.5 is not a whole number"},
		{"bad string id", row(`"a b"`, "-1", "0.5", "1"), "is not an id"},
		{"session_id variant", `{"session_id": "s1", "timestamp": 1, "input_length": 100, "output_length": 5}` + "\n", "session_id rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTrace(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line containing %q, got %v", tc.want, err)
			}
		})
	}
	// The hand-made bad logs the binary is tested with say the same.
	for file, want := range map[string]string{
		"orphan.jsonl":    "is on no line of the log",
		"duplicate.jsonl": "is used again",
		"cycle.jsonl":     "makes a cycle",
		"turn.jsonl":      "a turn number is its parent's plus one",
		"backwards.jsonl": "timestamps go backwards within a session",
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "traces", "bad", file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseTrace(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", file, want, err)
		}
	}
}

// Chat ids may be strings (exports of other logs), and a first turn may
// omit parent_chat_id and turn.
func TestLogSessionStringIDs(t *testing.T) {
	in := `{"chat_id": "conv-a:1", "timestamp": 1, "input_length": 100, "output_length": 5}
{"chat_id": "conv-a:2", "parent_chat_id": "conv-a:1", "timestamp": 2, "input_length": 150, "output_length": 5}
{"chat_id": "conv-b:1", "parent_chat_id": null, "timestamp": 2, "input_length": 90, "output_length": 5}
`
	log, err := parseTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	c := chainRows(log.rows)
	if !log.sessions || !slices.Equal(c.session, []int{0, 0, 1}) || !slices.Equal(c.turn, []int{1, 2, 1}) {
		t.Fatalf("sessions %v turns %v", c.session, c.turn)
	}
}

// The decoder refuses a context it does not know, or a log context on a
// phase without sessions.
func TestDecodeRefusesBadContext(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	for _, tc := range []struct {
		edit func(*Workload)
		want string
	}{
		{func(wl *Workload) { wl.Header.Phases[0].Context = "bogus" }, `context "bogus"`},
		{func(wl *Workload) {
			wl.Header.Phases[0].Sessions = 0
			for i := range wl.Requests {
				wl.Requests[i].Session, wl.Requests[i].Turn = "", 0
			}
		}, "but no sessions"},
	} {
		wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog})
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(wl)
		buf := encoded(t, wl)
		if _, err := Decode(buf); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
}

// goldenLogSessions is the command behind testdata/golden-v1.3.workload.zst.
var goldenLogSessions = BuildConfig{Tokenizer: "o200k_base", Schedule: "trace:" + sessionLog, TimeScale: 0.5, Seed: 3}

const goldenV13 = "testdata/golden-v1.3.workload.zst"

// TestGoldenV13 proves that a 1.3 file (a log's sessions) reads with its
// structure, that today's builder makes the same content from the same
// log, and that the older goldens keep their versions.
func TestGoldenV13(t *testing.T) {
	wl := openGolden(t, goldenV13, goldenLogSessions)
	h := wl.Header
	if h.Minor != 3 || h.Params.TraceFormat != TraceBailian || h.Phases[0].Context != ContextLog || h.Phases[0].Sessions != 4 || len(wl.Requests) != 7 {
		t.Fatalf("golden v1.3: %d.%d %s phases %+v, %d requests", h.Major, h.Minor, h.Params.TraceFormat, h.Phases, len(wl.Requests))
	}
	if r := wl.Requests[3]; r.Session != "p000-c7" || r.Turn != 3 || r.Offset != 1500e6 {
		t.Fatalf("golden v1.3 request 3: %s turn %d offset %d", r.Session, r.Turn, r.Offset)
	}
	rebuildsGolden(t, wl, goldenLogSessions, "log-sessions workload")
	for name, minor := range map[string]int{goldenV1: 0, goldenV12: 2} {
		old, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if old.Header.Minor != minor {
			t.Errorf("%s reads as 1.%d, want 1.%d", name, old.Header.Minor, minor)
		}
		for _, p := range old.Header.Phases {
			if p.Context != "" {
				t.Errorf("%s phase %d has context %q", name, p.Index, p.Context)
			}
		}
	}
}

// FuzzParseSessionLog feeds the session-aware parser arbitrary logs: it
// returns an error of one line or a log whose chains hold — every later
// turn's parent is an earlier row no later in time, turns count up by one
// along a session, and chat ids are unique.
func FuzzParseSessionLog(f *testing.F) {
	for _, glob := range []string{"testdata/traces/bailian*.jsonl", "testdata/traces/bad/*.jsonl"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"chat_id": "x", "parent_chat_id": "x", "timestamp": 1, "input_length": 1, "output_length": 1}`))
	f.Add([]byte(`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1, "input_length": 1, "output_length": 1, "turn": 1}` + "\n" +
		`{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 1, "output_length": 1, "turn": 2}` + "\n" +
		`{"chat_id": 3, "parent_chat_id": 1, "timestamp": 0.5, "input_length": 1, "output_length": 1, "turn": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Odd-length inputs take --orphan-turns first.
		log, err := parseTraceWith(bytes.NewReader(data), traceOptions{orphansStart: len(data)%2 == 1})
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		if !log.sessions {
			return
		}
		at := map[string]int{}
		for i, r := range log.rows {
			if _, dup := at[r.chat]; dup || !sessionIDOK(r.chat) || len(r.chat) > maxChatID {
				t.Fatalf("row %d: chat id %q repeated or not an id", i, r.chat)
			}
			at[r.chat] = i
		}
		c := chainRows(log.rows)
		for i, r := range log.rows {
			if r.parent == "" {
				if c.turn[i] != 1 {
					t.Fatalf("first turn %d has turn %d", i, c.turn[i])
				}
				continue
			}
			p, ok := at[r.parent]
			if !ok || p >= i || log.rows[p].t > r.t {
				t.Fatalf("row %d's parent %q is at %d (found %v), not an earlier row no later in time", i, r.parent, p, ok)
			}
			if c.session[i] == c.session[p] && c.turn[i] != c.turn[p]+1 {
				t.Fatalf("row %d is turn %d after its parent's %d", i, c.turn[i], c.turn[p])
			}
			if c.session[i] != c.session[p] && c.turn[i] != 1 {
				t.Fatalf("branch row %d starts at turn %d", i, c.turn[i])
			}
		}
		if len(c.first) == 0 || len(c.first) > len(log.rows) {
			t.Fatalf("%d sessions for %d rows", len(c.first), len(log.rows))
		}
	})
}

// A log's sessions are sharded whole, and every shard decodes, even one
// that holds none of them.
func TestLogSessionsShard(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 0; i < 5; i++ {
		part, err := Shard(wl, ShardSpec{Index: i, Count: 5})
		if err != nil {
			t.Fatal(err)
		}
		buf := encoded(t, part)
		back, err := Decode(buf)
		if err != nil {
			t.Fatalf("shard %d/5: %v", i, err)
		}
		for _, r := range back.Requests {
			seen[r.Session]++
		}
		if back.Header.Phases[0].Context != ContextLog {
			t.Fatalf("shard %d/5 lost the phase's context", i)
		}
	}
	if seen["p000-c7"] != 3 || seen["p000-c9"] != 2 || seen["p000-c18"] != 1 || seen["p000-c20"] != 1 {
		t.Fatalf("turns per session over the shards: %v", seen)
	}
}

// --orphan-turns first makes a turn whose parent is not in the log (one
// cut from a longer log) the first turn of its session; the other broken
// chains stay refused; the choice is checked.
func TestLogSessionsOrphanTurns(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:testdata/traces/bad/orphan.jsonl", OrphanTurns: OrphansFirst})
	if err != nil {
		t.Fatal(err)
	}
	h := wl.Header
	if h.Phases[0].Sessions != 2 || h.Params.OrphanTurns != OrphansFirst || !strings.Contains(h.Params.Note, "1 turn(s) whose parent is not in the log made first turns") {
		t.Fatalf("sessions %d, orphan_turns %q, note %q", h.Phases[0].Sessions, h.Params.OrphanTurns, h.Params.Note)
	}
	if r := wl.Requests[1]; r.Session != "p000-c12" || r.Turn != 1 {
		t.Fatalf("the orphan is %s turn %d, want p000-c12 turn 1", r.Session, r.Turn)
	}
	for _, bad := range []string{"cycle.jsonl", "turn.jsonl", "backwards.jsonl", "duplicate.jsonl"} {
		if _, err := Build(BuildConfig{Tok: tok, Schedule: "trace:testdata/traces/bad/" + bad, OrphanTurns: OrphansFirst}); err == nil {
			t.Errorf("%s was accepted with --orphan-turns first", bad)
		}
	}
	for _, tc := range []struct {
		cfg  BuildConfig
		want string
	}{
		{BuildConfig{Tok: tok, Schedule: "trace:" + sessionLog, OrphanTurns: "maybe"}, `BuildConfig.OrphanTurns "maybe" is not a choice`},
		{BuildConfig{Tok: tok, Schedule: "burst:1", OrphanTurns: OrphansFirst}, "BuildConfig.OrphanTurns applies to trace:FILE schedules only"},
	} {
		if _, err := Build(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	// The default and an explicit error build any other schedule as before.
	if _, err := Build(BuildConfig{Tok: tok, Schedule: "burst:1", OrphanTurns: OrphansError, Repeats: 1}); err != nil {
		t.Errorf("--orphan-turns error on a burst: %v", err)
	}
}
