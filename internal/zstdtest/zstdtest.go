// Package zstdtest reads a zstd-compressed file whole, for tests that look
// inside one: a trace as a person who runs zstd -d on it reads it, or a
// test tokenizer the repository keeps compressed. It imports no product
// package.
package zstdtest

import (
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// ReadFile is the content of the zstd-compressed file at path.
func ReadFile(t testing.TB, path string) []byte {
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
