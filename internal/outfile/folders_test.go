package outfile

import (
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// The folder checks say which part of a path is a file in the way, or
// that the folder is missing, in one line with the fix; a good path, and
// for CheckFolder a missing one (the command creates it), pass.
func TestFolderChecksNameTheFileInTheWay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	testutil.WriteFile(t, file, []byte("x"))
	for _, c := range []struct {
		name  string
		check func() error
		want  string // the whole message, "" for allowed
	}{
		{"parent exists", func() error { return CheckParent(filepath.Join(dir, "out.html")) }, ""},
		{"parent missing", func() error { return CheckParent(filepath.Join(dir, "nope", "out.html")) },
			"cannot write " + filepath.Join(dir, "nope", "out.html") + ": folder " + filepath.Join(dir, "nope") + " does not exist (create it first)"},
		{"parent is a file", func() error { return CheckParent(filepath.Join(file, "out.html")) },
			"cannot write " + filepath.Join(file, "out.html") + ": " + file + " is a file, not a folder; choose another output path"},
		{"parent under a file", func() error { return CheckParent(filepath.Join(file, "a", "out.html")) },
			"cannot write " + filepath.Join(file, "a", "out.html") + ": " + file + " is a file, not a folder; choose another output path"},
		{"no folder given", func() error { return CheckFolder("--dir", "") }, ""},
		{"folder exists", func() error { return CheckFolder("--dir", dir) }, ""},
		{"folder missing", func() error { return CheckFolder("--dir", filepath.Join(dir, "new", "deeper")) }, ""},
		{"folder is a file", func() error { return CheckFolder("--results", file) },
			"--results " + file + ": it is a file, not a folder; give a folder's path (created if missing), or move the file away"},
		{"folder under a file", func() error { return CheckFolder("-o", filepath.Join(file, "tables")) },
			"-o " + filepath.Join(file, "tables") + ": " + file + " is a file, not a folder, so nothing can go under it; give a folder's path (created if missing)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := testutil.ErrText(c.check())
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
