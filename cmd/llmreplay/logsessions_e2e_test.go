//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// A Qwen-Bailian log with chats replayed through the binary against the
// simulator with default flags: each chat becomes a session whose turns go
// out one after another, each never before the answer to the turn before
// it ended; a turn that resends its parent's hash blocks finds them in the
// simulator's prefix cache, one that does not finds nothing. Asserted on
// the order of the trace's own clock readings and the simulator's cache
// counts, never on durations.
func TestLogSessionsAgainstSim(t *testing.T) {
	bin := parallelBinary(t)
	sim := startSim(t, bin)
	dir := t.TempDir()
	// At the log's own pace (5 s) the simulator answers each turn before
	// the next one's logged time, which is then when it goes; at a
	// thousandth of it the next turn waits for the answer: both sides of
	// the rule are used, and checked exactly either way.
	for _, scale := range []string{"", "0.001"} {
		name := "time-scale " + scale
		if scale == "" {
			name = "time-scale default"
		}
		t.Run(name, func(t *testing.T) { replayLogSessions(t, bin, sim, dir, scale) })
	}
}

func replayLogSessions(t *testing.T, bin, sim, dir, scale string) {
	wl := filepath.Join(dir, "log"+scale+".workload.zst")
	args := []string{"workload", "build", "--schedule", "trace:../../workload/testdata/traces/bailian_sessions.jsonl", "-o", wl}
	if scale != "" {
		args = append(args, "--time-scale", scale)
	}
	mustRun(t, bin, args...)
	if out, e, code := run(t, nil, bin, "workload", "inspect", wl); code != 0 || !strings.Contains(out, "format:     llmreplay-workload 1.3") ||
		!strings.Contains(out, "sessions:   4 from the log's chats") || !strings.Contains(out, "log:        qwen-bailian bailian_sessions.jsonl") {
		t.Fatalf("workload inspect: exit %d: %s%s", code, out, e)
	}
	tr := filepath.Join(dir, "log"+scale+".trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", sim, "-o", tr); code != 0 || !strings.Contains(e, "7 requests sent, 7 ok, 0 failed") {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	_, recs := readTrace(t, tr)
	if len(recs) != 7 {
		t.Fatalf("%d records, want 7", len(recs))
	}
	w, err := workload.Open(wl)
	if err != nil {
		t.Fatal(err)
	}
	offset := map[string]int64{}
	for _, r := range w.Requests {
		offset[r.ID] = r.Offset
	}
	// The phase started where the session at offset 0 was scheduled.
	var start int64 = -1
	for _, rec := range recs {
		if rec.Turn == 1 && offset[rec.ID] == 0 {
			start = rec.Scheduled
		}
	}
	if start < 0 {
		t.Fatal("no first turn at offset 0")
	}
	type usage struct {
		Details struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	cached := map[string]int{}
	last := map[string]int{} // session → index of its latest turn in recs
	for i, rec := range recs {
		if !rec.OK() {
			t.Fatalf("%s failed: %v", rec.ID, rec.Error)
		}
		// Each turn is its own whole prompt: sent as built, not after
		// the conversation so far.
		if rec.SentInputTokens != rec.InputTokens {
			t.Errorf("%s (%s turn %d): sent %d input tokens, the log's turn has %d", rec.ID, rec.Session, rec.Turn, rec.SentInputTokens, rec.InputTokens)
		}
		// The rule, checked on the trace's own clock readings: a first
		// turn is due at its logged offset, a later one at its offset or
		// when the answer before it ended, whichever is later.
		due := start + offset[rec.ID]
		if p, ok := last[rec.Session]; ok {
			prev := recs[p]
			t.Logf("%s turn %d: logged time %d ns, answer before it ended at %d ns", rec.Session, rec.Turn, due, prev.Done)
			due = max(due, prev.Done)
			if prev.Turn != rec.Turn-1 || rec.Sent < prev.Done {
				t.Errorf("%s turn %d (sent %d) does not follow turn %d (done %d)", rec.Session, rec.Turn, rec.Sent, prev.Turn, prev.Done)
			}
		} else if rec.Turn != 1 {
			t.Errorf("%s starts at turn %d", rec.Session, rec.Turn)
		}
		if rec.Scheduled != due {
			t.Errorf("%s turn %d was due at %d ns, want %d (phase start %d + offset %d, or the answer before it)", rec.Session, rec.Turn, rec.Scheduled, due, start, offset[rec.ID])
		}
		last[rec.Session] = i
		var u usage
		if err := json.Unmarshal([]byte(rec.Usage), &u); err != nil {
			t.Fatalf("%s usage %q: %v", rec.ID, rec.Usage, err)
		}
		cached[rec.Session+"/"+string(rune('0'+rec.Turn))] = u.Details.Cached
	}
	if len(last) != 4 {
		t.Fatalf("sessions %v, want 4", last)
	}
	// Chat 12 (c7's turn 2) resends chat 7's 120-token prompt: at least
	// its first four 16-token blocks are cached. Chat 16 (c9's turn 2)
	// shares no hash block with chat 9, so it shares less.
	if c := cached["p000-c7/2"]; c < 64 {
		t.Errorf("c7 turn 2: %d cached tokens, want ≥ 64 (its parent's prompt)", c)
	}
	if c, w := cached["p000-c9/2"], cached["p000-c7/2"]; c >= w {
		t.Errorf("c9 turn 2 (no shared block): %d cached tokens, not fewer than c7 turn 2's %d", c, w)
	}
	// The run is salted (the default), yet its prompts share the log's
	// blocks: those hits are the log's, not a wrong count, so no warning.
	if out, e, code := run(t, nil, bin, "analyze", tr); code != 0 || strings.Contains(out, "cache_hit_on_salted") {
		t.Errorf("analyze: exit %d, a salted-hit warning on a request log's shared blocks:\n%s%s", code, out, e)
	}
}

// A log with a broken session structure is refused through the binary:
// exit 2, one line naming the problem and the fix, no workload written.
func TestLogSessionsBadInput(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	for file, want := range map[string]string{
		"orphan.jsonl":    "request log line 2: parent_chat_id 99 is on no line of the log: restore the parent's line, set parent_chat_id to -1 to start a session there, or build with --orphan-turns first",
		"duplicate.jsonl": "request log line 2: chat_id 7 is used again (first on line 1)",
		"cycle.jsonl":     "request log line 1: parent_chat_id 12 is on line 2, after its child: put the log's lines in arrival order",
		"turn.jsonl":      "request log line 2: turn 3 follows turn 1 of its parent chat 7 (line 1): a turn number is its parent's plus one",
		"backwards.jsonl": "request log line 2: chat 12 at timestamp 1.5 comes before its parent chat 7 at 2.0 (line 1): timestamps go backwards within a session",
	} {
		t.Run(file, func(t *testing.T) {
			out := filepath.Join(dir, file+".workload.zst")
			_, e, code := run(t, nil, bin, "workload", "build", "--schedule", "trace:../../workload/testdata/traces/bad/"+file, "-o", out)
			if code != 2 || !strings.Contains(e, want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, e, want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("a workload was written for a refused log: %v", err)
			}
		})
	}
	// A log cut from a longer one imports with --orphan-turns first; the
	// flag's value is checked.
	out := filepath.Join(dir, "cut.workload.zst")
	if o, e, code := run(t, nil, bin, "workload", "build", "--schedule", "trace:../../workload/testdata/traces/bad/orphan.jsonl", "--orphan-turns", "first", "-o", out); code != 0 || !strings.Contains(o, "wrote") {
		t.Fatalf("--orphan-turns first: exit %d: %s%s", code, o, e)
	}
	if o, e, code := run(t, nil, bin, "workload", "inspect", out); code != 0 || !strings.Contains(o, "sessions:   2 from the log's chats") || !strings.Contains(o, "1 turn(s) whose parent is not in the log made first turns") {
		t.Fatalf("inspect: exit %d: %s%s", code, o, e)
	}
	out = filepath.Join(dir, "maybe.workload.zst")
	if _, e, code := run(t, nil, bin, "workload", "build", "--schedule", "trace:../../workload/testdata/traces/bad/orphan.jsonl", "--orphan-turns", "maybe", "-o", out); code != 2 || !strings.Contains(e, `--orphan-turns "maybe" is not a choice: use error or first`) {
		t.Fatalf("--orphan-turns maybe: exit %d: %s", code, e)
	}
}
