package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportBadInputLeavesNoFolder: export of a trace that is missing or
// not a trace exits 2 with one line and does not create its -o folder
// (before, the folder was made first and left empty).
func TestExportBadInputLeavesNoFolder(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	notTrace := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notTrace, []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{filepath.Join(dir, "missing.trace.zst"), notTrace} {
		out := filepath.Join(dir, "tables", "new")
		o, e, code := run(t, nil, bin, "export", in, "-o", out)
		if code != 2 || len(strings.Split(strings.TrimSpace(e), "\n")) != 1 || o != "" {
			t.Errorf("export %s: exit %d, stdout %q, stderr %q; want exit 2 and one line", in, code, o, e)
		}
		if _, err := os.Stat(filepath.Join(dir, "tables")); err == nil {
			t.Errorf("export %s left its -o folder behind", in)
		}
	}
}
