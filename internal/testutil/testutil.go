// Package testutil holds the few steps that tests across the tree set up
// the same way: a file written into a test's folder, an error read as the
// text a user would see. It imports no product package, so any package's
// tests may use it.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to name inside dir with mode 0644, failing the
// test when it cannot, and returns the file's path. A test that builds its
// inputs with it never runs on a file that was silently not written.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ErrText is err's message, or "" for no error: the form a table of cases
// compares against, "" meaning the case is allowed.
func ErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
