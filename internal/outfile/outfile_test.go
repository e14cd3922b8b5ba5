package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.workload.zst")
	os.WriteFile(in, []byte("workload"), 0o644)
	existing := filepath.Join(dir, "old.txt")
	os.WriteFile(existing, []byte("notes"), 0o644)
	toIn := filepath.Join(dir, "to-in")
	os.Symlink(in, toIn)
	hard := filepath.Join(dir, "hard")
	os.Link(in, hard)
	toOld := filepath.Join(dir, "to-old")
	os.Symlink(existing, toOld)
	for _, c := range []struct {
		name  string
		dest  string
		force bool
		want  string // "" for allowed, else a word of the error
	}{
		{"new file", filepath.Join(dir, "new"), false, ""},
		{"stdout", "-", false, ""},
		{"the input", in, true, "input"},
		{"a symlink to the input", toIn, true, "input"},
		{"a hard link to the input", hard, true, "input"},
		{"an existing file", existing, false, "--force"},
		{"an existing file, forced", existing, true, ""},
		{"a symlink", toOld, false, "symlink"},
		{"a symlink, forced", toOld, true, ""},
		{"a folder", dir, true, "folder"},
		{"/dev/null", os.DevNull, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.dest, c.force, in)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestReplaceRemovesOnlySymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "t")
	os.WriteFile(target, []byte("x"), 0o644)
	link := filepath.Join(dir, "l")
	os.Symlink(target, link)
	if err := Replace(link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Error("the symlink is still there")
	}
	if err := Replace(target); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Error("Replace removed a regular file")
	}
}

// ClaimNumbered skips a stem when any one of its names is taken, keeps
// the files it found, and leaves no partial claim of a stem it skipped.
func TestClaimNumberedPartlyTaken(t *testing.T) {
	dir := t.TempDir()
	stem := filepath.Join(dir, "run")
	testutil.WriteFile(t, stem+".b", []byte("mine"))
	got, err := ClaimNumbered(stem, ".a", ".b")
	if err != nil || got != stem+"-2" {
		t.Fatalf("ClaimNumbered = %q, %v; want %s-2", got, err, stem)
	}
	if _, err := os.Stat(stem + ".a"); err == nil {
		t.Error("the skipped stem's .a claim was left behind")
	}
	if b, _ := os.ReadFile(stem + ".b"); string(b) != "mine" {
		t.Errorf("the existing file was changed: %q", b)
	}
	for _, ext := range []string{".a", ".b"} {
		if st, err := os.Stat(got + ext); err != nil || st.Size() != 0 {
			t.Errorf("%s%s not claimed empty: %v", got, ext, err)
		}
	}
}

// TestHoldRemovesOnlyAnUnfilledClaim: a run's hold on its output leaves
// nothing when the run wrote nothing, keeps a file written in place or
// renamed over the claim, and never touches a file that was there before.
func TestHoldRemovesOnlyAnUnfilledClaim(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	exists := func(name string) bool { _, err := os.Stat(p(name)); return err == nil }

	release, err := Hold(p("unfilled"))
	if err != nil || !exists("unfilled") {
		t.Fatalf("no claim: %v", err)
	}
	if _, err := Hold(p("unfilled")); err != nil {
		t.Fatalf("a second hold of a claimed path: %v (the caller's Check refuses it, not Hold)", err)
	}
	release()
	if exists("unfilled") {
		t.Error("an unfilled claim was left")
	}

	release, _ = Hold(p("in-place"))
	os.WriteFile(p("in-place"), []byte("table"), 0o644)
	release()
	if !exists("in-place") {
		t.Error("a file written in place was removed")
	}

	release, _ = Hold(p("renamed"))
	os.WriteFile(p("tmp"), nil, 0o644) // empty, but another inode
	os.Rename(p("tmp"), p("renamed"))
	release()
	if !exists("renamed") {
		t.Error("a file renamed over the claim was removed")
	}

	os.WriteFile(p("old"), nil, 0o644)
	release, err = Hold(p("old"))
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !exists("old") {
		t.Error("a file that was there before was removed")
	}
}
