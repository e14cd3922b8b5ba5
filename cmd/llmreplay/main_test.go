package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// Every command's help shows a runnable example (the foundation issue).
func TestEveryCommandHasAnExample(t *testing.T) {
	root := NewRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		if c.Example == "" {
			t.Errorf("%q has no Example in its help", c.CommandPath())
		} else if !strings.Contains(c.Example, "llmreplay ") {
			t.Errorf("%q: example %q does not show a llmreplay command line", c.CommandPath(), c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
