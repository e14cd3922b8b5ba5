package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// A workload file is often someone else's (a colleague's, a hand edit, an
// imported log): what the binary reads from one is bounded and escaped.

// TestHandEditedWorkloadRefused: a workload edited by hand past its fields'
// bounds is refused, through the binary. A workload edited to 2e9 salt words
// made replay die out of memory, and a burst of concurrency 10^8 started
// that many goroutines; now replay exits 2 at once with one line naming the
// field, before any request.
func TestHandEditedWorkloadRefused(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	good := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1")
	for _, c := range []struct {
		name, want string
		edit       func(*workload.Workload)
	}{
		{"salt words", "salt words in a", func(wl *workload.Workload) { wl.Requests[0].Salt.Words = 2_000_000_000 }},
		{"burst concurrency", "concurrency 100000000", func(wl *workload.Workload) { wl.Header.Phases[0].Concurrency = 100_000_000 }},
		{"closed concurrency", "concurrency 100000000", func(wl *workload.Workload) {
			wl.Header.Phases[0].Kind = workload.KindClosed
			wl.Header.Phases[0].Concurrency = 100_000_000
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl, err := workload.Open(good)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(wl)
			bad := filepath.Join(t.TempDir(), "bad.workload.zst")
			if err := workload.Create(bad, wl); err != nil {
				t.Fatal(err)
			}
			// No server: the file must be refused before anything is sent.
			_, e, code := run(t, nil, bin, "replay", bad, "--url", "http://127.0.0.1:9", "--model", "m", "-o", filepath.Join(t.TempDir(), "t.trace.zst"))
			if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", code, e, c.want)
			}
		})
	}
}

// TestWorkloadInspectEscapes: a workload file is often someone else's (a
// colleague's, an imported log), and every string in it reaches the
// terminal through workload inspect, cat and verify. A header and a
// request carrying spoofID must be shown escaped by all of them; the JSON
// outputs must still decode to the exact strings.
func TestWorkloadInspectEscapes(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	path := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1")
	wl, err := workload.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	wl.Header.ToolVersion = spoofID
	wl.Header.Params.Note = spoofID
	wl.Header.Params.Arrival = spoofID
	wl.Header.Phases[0].Name = spoofID
	wl.Requests[0].ID = spoofID
	evil := filepath.Join(dir, "evil.workload.zst")
	if err := workload.Create(evil, wl); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"workload", "inspect", evil},
		{"workload", "inspect", "--json", evil},
		{"workload", "cat", evil},
		{"workload", "verify", evil},
	} {
		out, e, code := run(t, nil, bin, args...)
		both := out + e
		for _, r := range both {
			if spoofRune(r) && r != '\t' {
				t.Errorf("%v: raw %U reached the terminal:\n%s", args, r, both)
				break
			}
		}
		if code != 0 && args[1] != "verify" {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
		if args[1] == "inspect" && len(args) == 3 && strings.Count(out, spoofShown) < 3 {
			t.Errorf("%v: want the note, the version and the phase name shown as %q:\n%s", args, spoofShown, out)
		}
	}
	// The JSON keeps the exact value for programs.
	out, _, _ := run(t, nil, bin, "workload", "cat", evil)
	first := strings.SplitN(out, "\n", 2)[0]
	var got struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(first), &got); err != nil || got.ID != spoofID {
		t.Errorf("workload cat: id decodes to %q (%v), want the exact value", got.ID, err)
	}
}
