package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// A short search on the simulator: enough for one probe round to be
// written, with the budget's exit 1 accepted.
var capShort = []string{"capacity", "--time-scale", "0.1", "--max-tokens", "16", "--slo", "ttft_p90<=1s", "--max-requests", "40", "-q"}

// TestCapacityNeverOverwrites: capacity's -o and --report refuse an
// existing file without --force (one line, exit 2, the file untouched and
// nothing else written), and --force replaces it with a trace.
func TestCapacityNeverOverwrites(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	kept := filepath.Join(dir, "mine.trace.zst")
	if err := os.WriteFile(kept, []byte("my own file"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.trace.zst")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"-o", []string{"-o", kept}},
		{"--report", []string{"-o", fresh, "--report", kept}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCap(t, bin, append(capShort, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(errs, tc.name+": cannot write "+kept+": it exists; pass --force") || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s and --force", code, out, errs, tc.name)
			}
			if b, _ := os.ReadFile(kept); string(b) != "my own file" {
				t.Errorf("the existing file was changed: %q", b)
			}
			if _, err := os.Stat(fresh); err == nil {
				t.Errorf("a refused run left %s behind", fresh)
			}
		})
	}
	t.Run("--force", func(t *testing.T) {
		_, errs, code := runCap(t, bin, append(capShort, "-o", kept, "--force")...)
		if code != 0 && code != 1 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		r, err := trace.Open(kept)
		if err != nil {
			t.Fatalf("--force did not leave a trace: %v", err)
		}
		r.Close()
	})
	// --from writes only the report: the same rule.
	t.Run("--from --report", func(t *testing.T) {
		report := filepath.Join(dir, "page.html")
		if err := os.WriteFile(report, []byte("my page"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errs, code := runCap(t, bin, "capacity", "--from", kept, "--report", report)
		if code != 2 || !strings.Contains(errs, "--report: cannot write "+report+": it exists; pass --force") || out != "" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
		if b, _ := os.ReadFile(report); string(b) != "my page" {
			t.Errorf("the existing report was changed: %q", b)
		}
		if _, errs, code := runCap(t, bin, "capacity", "--from", kept, "--report", report, "--force"); code > 1 {
			t.Fatalf("--force: exit %d: %s", code, errs)
		}
		if b, _ := os.ReadFile(report); !strings.Contains(string(b), "<html") {
			t.Errorf("--force did not write the report: %.80q", b)
		}
	})
}

var traceLineRE = regexp.MustCompile(`(?m)^trace: (\S+) \(answer again`)

// TestCapacityDefaultNameTaken: the default trace name is timestamped to
// the second, so a run started in the same second as another finds its
// name taken. It takes the next free numbered name and leaves the other
// run's file alone. The names of every second around the run are taken
// beforehand, so the collision happens however late the binary starts.
func TestCapacityDefaultNameTaken(t *testing.T) {
	bin := parallelBinary(t)
	results := t.TempDir()
	now := time.Now()
	taken := map[string]bool{}
	for s := -2; s <= 120; s++ {
		p := filepath.Join(results, trace.RunName("taken", "", "", now.Add(time.Duration(s)*time.Second))+".capacity.trace.zst")
		if err := os.WriteFile(p, []byte("another run"), 0o644); err != nil {
			t.Fatal(err)
		}
		taken[p] = true
	}
	_, errs, code := runCap(t, bin, append(capShort, "--label", "taken", "--results", results)...)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := traceLineRE.FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no trace named: %s", errs)
	}
	got := m[1]
	if taken[got] {
		t.Fatalf("the run wrote over another run's trace %s", got)
	}
	if base := strings.TrimSuffix(got, "-2.capacity.trace.zst") + ".capacity.trace.zst"; !taken[base] {
		t.Errorf("trace %s: want the taken name with -2 (start after the taken seconds?)", got)
	}
	for p := range taken {
		if b, _ := os.ReadFile(p); string(b) != "another run" {
			t.Errorf("%s was changed", p)
		}
	}
	r, err := trace.Open(got)
	if err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	r.Close()
}

// TestCapacityFailedRunLeavesNothing: a run that measured nothing (the
// server unreachable, no --model) removes the name it claimed under
// --results.
func TestCapacityFailedRunLeavesNothing(t *testing.T) {
	bin := parallelBinary(t)
	results := t.TempDir()
	_, errs, code := runCap(t, bin, "capacity", "--url", "http://127.0.0.1:1/v1", "--slo", "ttft_p90<=1s", "--results", results)
	if code != 2 {
		t.Errorf("exit %d: %s", code, errs)
	}
	if ents, _ := os.ReadDir(results); len(ents) != 0 {
		t.Errorf("a failed run left %d file(s) in --results, first %s", len(ents), ents[0].Name())
	}
}
