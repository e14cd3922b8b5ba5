package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/workload"
)

// TestWorkloadInspectEscapes: a workload file is often someone else's (a
// colleague's, an imported log), and every string in it reaches the
// terminal through workload inspect, cat and verify. A header and a
// request carrying spoofID must be shown escaped by all of them; the JSON
// outputs must still decode to the exact strings.
func TestWorkloadInspectEscapes(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	path := filepath.Join(dir, "w.workload.zst")
	mustRun(t, bin, "workload", "build", "--input-tokens", "64", "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1", "-o", path)
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
