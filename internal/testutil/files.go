package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// ReadZstd is the zstd-compressed file at path, decompressed: a test's
// copy of a large fixture kept small in the repository, or a written
// trace read as a person with zstd -d would read it.
func ReadZstd(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	plain, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return plain
}

// HubSnapshot lays out one file of a model repository (such as
// tokenizer.json) in the Hugging Face hub cache folder cache, as
// huggingface-cli leaves it: its bytes in blobs/, a symlink to them at
// snapshots/REV/NAME, and, with withRef, refs/main naming rev. It returns
// the symlink's path.
func HubSnapshot(t testing.TB, cache, repo, rev, name string, data []byte, withRef bool) string {
	t.Helper()
	dir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	blob := filepath.Join(dir, "blobs", "b1"+rev)
	snap := filepath.Join(dir, "snapshots", rev)
	for _, d := range []string{filepath.Dir(blob), snap, filepath.Join(dir, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "blobs", "b1"+rev), filepath.Join(snap, name)); err != nil {
		t.Fatal(err)
	}
	if withRef {
		if err := os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(rev), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(snap, name)
}

// WriteFile writes a test's fixture file (mode 0644) and returns its path,
// failing the test if it cannot.
func WriteFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Glob is the files matching pattern, failing the test when there are
// fewer than atLeast: a test over every fixture of a kind must not pass
// because it found none.
func Glob(t testing.TB, pattern string, atLeast int) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) < atLeast {
		t.Fatalf("%s: %d files, want at least %d (%v)", pattern, len(files), atLeast, err)
	}
	return files
}
