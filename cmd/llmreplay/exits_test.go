package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputExits: bad input anywhere is exit status 2 with one line that
// names the problem and the fix, before anything starts, is printed on
// stdout or is written, run through the in-process command tree with default
// flags except the one under test.
func TestBadInputExits(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.workload.zst")
	if _, _, err := runCLI(t, nil, "workload", "build", "--schedule", "burst:1", "--repeats", "1", "-o", wl); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "x.txt")
	cases := []struct {
		name string
		args []string
		want []string // every piece must be in the one-line message
	}{
		{"url without scheme echoes it and suggests http://", []string{"replay", wl, "--url", "127.0.0.1:34987"},
			[]string{`"127.0.0.1:34987" has no scheme`, "http://127.0.0.1:34987"}},
		{"url password never echoed", []string{"replay", wl, "--url", "user:hunter2@127.0.0.1:1"},
			[]string{"has no scheme", "http://127.0.0.1:1"}},
		{"bench url without scheme", []string{"bench", "--url", "localhost:8080"},
			[]string{"http://localhost:8080"}},
		{"replay without a file says what it needs", []string{"replay", "--url", "http://127.0.0.1:1"},
			[]string{"replay needs a workload file", "workload build"}},
		{"replay with two files", []string{"replay", wl, wl},
			[]string{"takes one file, got 2"}},
		{"workload without subcommand", []string{"workload"},
			[]string{"workload needs a subcommand", "build", "verify"}},
		{"trace without subcommand", []string{"trace"},
			[]string{"trace needs a subcommand", "info", "cat", "merge"}},
		{"unknown workload subcommand", []string{"workload", "show"},
			[]string{`unknown workload subcommand "show"`}},
		{"repeated single-value flag", []string{"workload", "build", "-o", filepath.Join(dir, "r.zst"), "--max-tokens", "100", "--max-tokens", "200"},
			[]string{"--max-tokens", "given twice"}},
		{"selftest -o in a missing folder fails before running", []string{"selftest", "-o", missing},
			[]string{missing, "does not exist"}},
		{"bench negative input tokens", []string{"bench", "--input-tokens", "-5"},
			[]string{"--input-tokens -5"}},
		{"bench max-tokens 0 names one flag", []string{"bench", "--max-tokens", "0"},
			[]string{"--max-tokens 0"}},
		{"analyze bad tokenizer", []string{"analyze", "--tokenizer", filepath.Join(dir, "nope.json"), wl},
			[]string{"--tokenizer"}},
		{"selftest section past the last", []string{"selftest", "--section", "7"},
			[]string{"sections are numbered 1 to 6"}},
		{"selftest section not a number", []string{"selftest", "--section", "x"},
			[]string{"--section"}},
		{"selftest takes no argument", []string{"selftest", "extra"},
			[]string{"unknown command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, nil, c.args...)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit %d (%v), want 2\nstdout: %s\nstderr: %s", code, err, stdout, stderr)
			}
			if stdout != "" {
				t.Errorf("printed %q before failing", stdout)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(stderr, "hunter2") {
				t.Errorf("the URL's password was echoed: %q", msg)
			}
			if strings.Contains(stderr, "simulat") || strings.Contains(stderr, "selftest:") {
				t.Errorf("something started before the bad input was refused:\n%s", stderr)
			}
			if c.name == "bench max-tokens 0 names one flag" && strings.Count(msg, "--") != 1 {
				t.Errorf("message names %d flags for one problem: %q", strings.Count(msg, "--"), msg)
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(missing)); err == nil {
		t.Error("selftest created the missing folder")
	}
	if _, err := os.Stat(filepath.Join(dir, "r.zst")); err == nil {
		t.Error("a workload was written despite the repeated flag")
	}
}
