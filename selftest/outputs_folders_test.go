package selftest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestFoldersAreCheckedBeforeMeasuring: a --dir that is a file, or lies
// under one, and a table file whose folder is missing are refused naming
// their setting, before the harness measures anything.
func TestFoldersAreCheckedBeforeMeasuring(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		name  string
		check func() error
		want  string // "" when allowed
	}{
		{"dir missing: made later", func() error { return Config{Dir: filepath.Join(dir, "new")}.Check(nil) }, ""},
		{"dir is a file", func() error { return Config{Dir: file}.Check(nil) },
			"selftest: Config: Dir " + file + ": it is a file, not a folder; give a folder's path (created if missing), or move the file away"},
		{"dir under a file", func() error { return Config{Dir: filepath.Join(file, "x")}.Check(nil) },
			"selftest: Config: Dir " + filepath.Join(file, "x") + ": " + file + " is a file, not a folder, so nothing can go under it; give a folder's path (created if missing)"},
		{"table's folder missing", func() error {
			f, err := Outputs{Table: filepath.Join(dir, "nope", "t.txt")}.Claim()
			if err == nil {
				f.Close()
			}
			return err
		}, "selftest: Config: cannot write " + filepath.Join(dir, "nope", "t.txt") + ": folder " + filepath.Join(dir, "nope") + " does not exist (create it first)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := testutil.ErrText(c.check())
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
