package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Bad selftest command lines exit 2 before anything runs; the hidden
// simulator child refuses flags it does not know.
func TestSelftestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"selftest", "--section", "7"}, "sections are numbered 1 to 6"},
		{[]string{"selftest", "--section", "x"}, "--section"},
		{[]string{"selftest", "extra"}, "unknown command"},
	} {
		var out, errw bytes.Buffer
		root := NewRootCmd(&out, &errw)
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (exit %d), want exit 2 mentioning %q", tc.args, err, exitCode(err), tc.want)
		}
		if out.Len() > 0 {
			t.Errorf("%v: printed %q before failing", tc.args, out.String())
		}
	}
	var out bytes.Buffer
	root := NewRootCmd(&out, &bytes.Buffer{})
	root.SetArgs([]string{"selftest", "sim-child", "-no-such-flag"})
	if err := root.Execute(); err == nil {
		t.Error("sim-child accepted an unknown flag")
	}
}

// The built binary measures the machine's noise floor before each run and
// judges the figures beside it: two quick runs of the schedule section print
// the floor table with one line per run, a run column in the section and the
// targets table with its median, spread and floor columns. Only the presence
// and shape of the lines are checked, never the times (the machine is busy).
func TestSelftestNoiseFloorBinary(t *testing.T) {
	bin := builtBinary(t)
	cmd := exec.Command(bin, "selftest", "--short", "--section", "4", "--repeat", "2", "--floor-wakeups", "50")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("selftest: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"2 run(s) of every section",
		"0. Machine noise floor, before each run: wake-up lateness (50 wake-ups every 2ms",
		"run  floor p50  floor p99  floor max  steal",
		"4. Schedule precision",
		"p99/floor p99",
		"median  spread",
		"runs met",
		"wake-up p99",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("selftest output lacks %q:\n%s", want, out)
		}
	}
	// One floor line per run, starting with its number.
	lines := strings.Split(out, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "run  floor p50") })
	if i < 0 || i+2 >= len(lines) || !strings.HasPrefix(lines[i+1], "1 ") || !strings.HasPrefix(lines[i+2], "2 ") {
		t.Errorf("floor table does not list runs 1 and 2:\n%s", out)
	}
	// The 500/s row is judged: met, within noise or missed, never "not measured".
	j := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "schedule lateness p99") })
	if j < 0 || strings.Contains(lines[j], "not measured") || !strings.Contains(lines[j], " of 2") {
		t.Errorf("schedule target not judged over 2 runs:\n%s", out)
	}
	for _, bad := range [][]string{{"--repeat", "-1"}, {"--floor-wakeups", "-3"}} {
		c := exec.Command(bin, append([]string{"selftest", "--short"}, bad...)...)
		var e bytes.Buffer
		c.Stderr = &e
		err := c.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(e.String(), bad[0]) {
			t.Errorf("selftest %v: %v, stderr %q; want exit 2 naming the flag", bad, err, e.String())
		}
	}
}
