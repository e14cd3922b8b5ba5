package main

import (
	"bytes"
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
