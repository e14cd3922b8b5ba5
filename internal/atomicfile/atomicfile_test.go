package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileCommits(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "out.bin")
	if err := WriteFile(dest, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dest)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read back %q, %v", got, err)
	}
	assertOnly(t, dir, "out.bin")
	if st, _ := os.Stat(dest); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 like any file the user writes", st.Mode().Perm())
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	f.Abort() // idempotent
	assertOnly(t, dir)
}

func TestMissingFolderIsClear(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "nope", "out.bin"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("want a 'does not exist' error, got %v", err)
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("folder holds %v, want %v", got, names)
	}
}
