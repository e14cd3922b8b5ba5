package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

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
// id for id, the bytes tiktoken-go decodes; every token is found at its
// id; the digest in the file is the one workloads have always recorded,
// computed again here; and no lookup probes more than a few slots.
// -update rewrites the files from the library (after a deliberate upgrade
// of it).
func TestEmbeddedVocabulariesMatchTheLibrary(t *testing.T) {
	digests := map[string]string{
		"o200k_base":  "sha256:d31d0af3a505dfca4e0d057dd87800dfc649b32beb375e13b25d379f7805107e",
		"cl100k_base": "sha256:e937608629e29a1549d03fa72e571277ea268c4983d7e4231633e07afa607b12",
	}
	for _, name := range TiktokenNames {
		want := libraryVocab(t, name)
		if d := tiktokenDigest(name, want); d != digests[name] {
			t.Fatalf("%s: the library's vocabulary has digest %s, workloads recorded %s", name, d, digests[name])
		}
		if *update {
			if err := os.WriteFile(filepath.FromSlash(vocabPath(name)), vocabFile(want, digests[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		x, err := readVocab(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := tokens(x); !slices.Equal(got, want) {
			t.Errorf("%s: the embedded vocabulary (%d ids) is not the library's (%d ids): go test ./workload/tokenize -run %s -update", name, len(got), len(want), t.Name())
		}
		checkFindsEveryToken(t, x, want)
		if run := longestRun(x); run > 64 {
			t.Errorf("%s: %d occupied slots in a row: a lookup of bytes that are no token can probe that many", name, run)
		}
		if tok := loadT(t, name); tok.Digest() != digests[name] {
			t.Errorf("%s: digest %s, workloads recorded %s", name, tok.Digest(), digests[name])
		}
	}
}

// tokens lists x's token bytes by id.
func tokens(x *rankIndex) []string {
	ids := make([]string, x.n)
	for id := range ids {
		ids[id] = x.token(int32(id))
	}
	return ids
}

// checkFindsEveryToken: get finds every token of ids at its id, or at the
// later id of two with the same bytes.
func checkFindsEveryToken(t *testing.T, x *rankIndex, ids []string) {
	t.Helper()
	last := map[string]int32{}
	for id, s := range ids {
		if s != "" {
			last[s] = int32(id)
		}
	}
	for s, id := range last {
		if got, ok := x.get(s); !ok || got != id {
			t.Fatalf("get(%q) = %d, %v; want %d", s, got, ok, id)
		}
	}
}

// longestRun is the most occupied slots in a row (wrapping around): the
// most a lookup of absent bytes can probe.
func longestRun(x *rankIndex) int {
	size := int(x.mask + 1)
	best, run := 0, 0
	for i := range 2 * size {
		if u32(x.data, x.slots+4*(i%size)) != 0 {
			run++
			best = max(best, min(run, size))
		} else {
			run = 0
		}
	}
	return best
}

const testDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// TestVocabFileRefusesDamage: a file without the magic, cut short, with
// bytes past its tokens or with offsets that run backwards is refused, not
// read in part.
func TestVocabFileRefusesDamage(t *testing.T) {
	good := vocabFile([]string{"a", "", "bc"}, testDigest)
	x, err := openVocab(string(good))
	if err != nil || !slices.Equal(tokens(x), []string{"a", "", "bc"}) || x.digest != testDigest {
		t.Fatalf("round trip: %v, %v", x, err)
	}
	backwards := append([]byte(nil), good...)
	offs := len(vocabMagic) + vocabDigestLen + 1 + 8
	backwards[offs+4] = 3 // id 0 would end past id 1's end
	for _, b := range [][]byte{good[1:], good[:len(good)-1], append(append([]byte(nil), good...), 0xff), backwards, good[:offs]} {
		if x, err := openVocab(string(b)); err == nil {
			t.Errorf("%q read as %q", b, tokens(x))
		}
	}
}

// FuzzOpenVocab: openVocab refuses or opens any bytes, and what it opens
// can be read whole, every id's token and a lookup of each, without a
// panic or a probe past the table.
func FuzzOpenVocab(f *testing.F) {
	f.Add(vocabFile([]string{"a", "", "bc"}, testDigest), "bc")
	f.Add(vocabFile(nil, testDigest), "")
	f.Add(vocabFile([]string{"x", "x", "yz", "ü"}, testDigest), "x")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		x, err := openVocab(string(b))
		if err != nil {
			return
		}
		x.get(s)
		for id := range min(x.n, 1<<12) {
			x.get(x.token(int32(id)))
		}
	})
}

// tiktokenDigest is the digest workloads record for an encoding: sha256
// over "tiktoken:<name>\n" and "<id>:<hex bytes>\n" for each id, the form
// the first versions computed from the library's table, so workloads keep
// their digests. -update writes it into the vocabulary file; no command
// computes it.
func tiktokenDigest(name string, ids []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tiktoken:%s\n", name)
	var line []byte
	for id, s := range ids {
		if s == "" {
			continue
		}
		line = strconv.AppendInt(line[:0], int64(id), 10)
		line = append(line, ':')
		line = hex.AppendEncode(line, []byte(s))
		line = append(line, '\n')
		h.Write(line)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
