// Package testutil holds the checks that tests across the tree make the
// same way, such as "this output holds each of these pieces". It imports
// no product package, so any package's tests may use it.
package testutil

import (
	"strings"
	"testing"
)

// Contains fails the test for each of wants that text, named what in the
// message, does not hold, and shows text once.
func Contains(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// ErrText is err's message, or "" for no error: the form a table of cases
// compares against, "" meaning the case is allowed.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// OneLine fails the test if err's message spans lines: bad input gets a
// one-line error, whatever the input (the promise every parser's fuzz
// target checks).
func OneLine(t testing.TB, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Fatalf("a multi-line error: %q", err)
	}
}
