// Package hfhubtest lays out a Hugging Face hub cache for tests, as
// `huggingface-cli download REPO tokenizer.json` leaves it: the file in
// blobs/ under its SHA-256, the revision's snapshot a symlink to it, and
// refs/main naming the revision. Tests of the tokenizer's model-id lookup
// and of the binary that uses it build the same cache from it. It imports
// no product package.
package hfhubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Snapshot writes js as the tokenizer.json of revision rev of repo
// ("Org/Name") into the hub cache folder cache, and refs/main naming rev
// when main is set. It returns the snapshot's tokenizer.json.
func Snapshot(t testing.TB, cache, repo, rev string, js []byte, main bool) string {
	t.Helper()
	sum := sha256.Sum256(js)
	blob := hex.EncodeToString(sum[:])
	dir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap := filepath.Join(dir, "snapshots", rev)
	for _, d := range []string{filepath.Join(dir, "blobs"), filepath.Join(dir, "refs"), snap} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "blobs", blob), js, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(snap, "tokenizer.json")
	if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), file); err != nil {
		t.Fatal(err)
	}
	if main {
		if err := os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(rev), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return file
}
