package main

import (
	"bytes"
	"testing"
)

// Every kind of bad command line exits 2, like any other bad input.
func TestBadCommandLinesExit2(t *testing.T) {
	cases := [][]string{
		{"nope"},
		{"replay"},
		{"bench", "--concurrency", "x"},
		{"bench", "--no-such-flag"},
		{"replay", "w.workload.zst"}, // no --url
		{"bench", "--profile", "no-such-profile"},
	}
	for _, args := range cases {
		var out, errw bytes.Buffer
		root := NewRootCmd(&out, &errw)
		root.SetArgs(args)
		err := root.Execute()
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		if code := exitCode(err); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, code, err)
		}
	}
}
