package tokenize

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/tiktoken-go/tokenizer"
)

var update = flag.Bool("update", false, "rewrite the embedded vocabularies from tiktoken-go")

// libraryCodec is tiktoken-go's codec for an encoding: where our
// vocabularies come from, and the second opinion the encoder tests ask.
func libraryCodec(t testing.TB, name string) tokenizer.Codec {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// libraryVocab decodes every id with the library: ids are dense up to
// the vocabulary size; special tokens (which Decode refuses) sit just
// above it, so it stops well past the last one.
func libraryVocab(t testing.TB, name string) []string {
	c := libraryCodec(t, name)
	var ids []string
	one := make([]uint, 1)
	for id, misses := 0, 0; id < 300000 && misses <= 4096; id++ {
		one[0] = uint(id)
		s, err := c.Decode(one)
		if err != nil || s == "" {
			misses++
			continue
		}
		for len(ids) < id {
			ids = append(ids, "")
		}
		ids = append(ids, s)
	}
	return ids
}

// TestEmbeddedVocabulariesMatchTheLibrary: each embedded vocabulary is,
// id for id, the bytes tiktoken-go decodes, and the digests are the ones
// workloads have always recorded. -update rewrites the files from the
// library (after a deliberate upgrade of it).
func TestEmbeddedVocabulariesMatchTheLibrary(t *testing.T) {
	digests := map[string]string{
		"o200k_base":  "sha256:d31d0af3a505dfca4e0d057dd87800dfc649b32beb375e13b25d379f7805107e",
		"cl100k_base": "sha256:e937608629e29a1549d03fa72e571277ea268c4983d7e4231633e07afa607b12",
	}
	for _, name := range TiktokenNames {
		want := libraryVocab(t, name)
		if *update {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.FromSlash(vocabPath(name)), enc.EncodeAll(vocabFile(want), nil), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := readVocab(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the embedded vocabulary (%d ids) is not the library's (%d ids): go test ./workload/tokenize -run %s -update", name, len(got), len(want), t.Name())
		}
		tok := loadT(t, name)
		if tok.Digest() != digests[name] {
			t.Errorf("%s: digest %s, workloads recorded %s", name, tok.Digest(), digests[name])
		}
	}
}

// TestVocabFileRefusesDamage: a file without the magic or with a length
// past its end is refused, not read short.
func TestVocabFileRefusesDamage(t *testing.T) {
	good := vocabFile([]string{"a", "", "bc"})
	if ids, err := parseVocabFile(good); err != nil || !slices.Equal(ids, []string{"a", "", "bc"}) {
		t.Fatalf("round trip: %q, %v", ids, err)
	}
	for _, b := range [][]byte{good[1:], good[:len(good)-1], append(append([]byte(nil), good...), 0xff)} {
		if ids, err := parseVocabFile(b); err == nil {
			t.Errorf("%q read as %q", b, ids)
		}
	}
}
