// Package golden compares a test's output with a golden file, or rewrites
// the file when the test runs with -update: one implementation for every
// package's golden tests (each package declares its own -update flag, the
// same name everywhere).
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the file at path; with update it writes got there
// instead. rerun is the command that rewrites the file, for the message.
func Check(t testing.TB, path string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to create it)", err, rerun)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s rewrites it after a deliberate change)\n--- got ---\n%s", path, rerun, got)
	}
}
