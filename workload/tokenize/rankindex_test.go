package tokenize

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"testing"
)

// TestRankIndexFindsEveryToken: every token is found at its id, bytes
// that are no token are not, and a later id with the same bytes replaces
// the earlier one (as the map it replaces did), across enough tokens to
// make probe chains.
func TestRankIndexFindsEveryToken(t *testing.T) {
	idBytes := []string{"", "a"}
	for i := range 5000 {
		idBytes = append(idBytes, fmt.Sprint("t", i))
	}
	idBytes = append(idBytes, "a") // a second id for "a"
	x, err := openVocab(string(vocabFile(idBytes, testDigest)))
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range idBytes[2 : len(idBytes)-1] {
		if got, ok := x.get(s); !ok || got != int32(id+2) {
			t.Fatalf("get(%q) = %d, %v; want %d", s, got, ok, id+2)
		}
	}
	if got, ok := x.get("a"); !ok || got != int32(len(idBytes)-1) {
		t.Errorf("get(a) = %d, %v; want the later id %d", got, ok, len(idBytes)-1)
	}
	for _, s := range []string{"", "b", "t5000", "t-1"} {
		if got, ok := x.get(s); ok {
			t.Errorf("get(%q) = %d, want not found", s, got)
		}
	}
}

// vocabFile is a vocabulary file (format 2) of ids with digest, which
// must be "sha256:" and 64 hex digits: what -update embeds, and the
// tests' own small files.
func vocabFile(ids []string, digest string) []byte {
	n := len(ids)
	size := uint64(1) << bits.Len(uint(2*n))
	mask := size - 1
	slots := make([]uint32, size)
	for id, s := range ids {
		if s == "" {
			continue
		}
		for i := vocabHash(s) & mask; ; i = (i + 1) & mask {
			if v := slots[i]; v == 0 || ids[v-1] == s {
				slots[i] = uint32(id + 1)
				break
			}
		}
	}
	b := append([]byte(vocabMagic), digest...)
	b = append(b, '\n')
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	off := 0
	b = binary.LittleEndian.AppendUint32(b, 0)
	for _, s := range ids {
		off += len(s)
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
	}
	for _, v := range slots {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, s := range ids {
		b = append(b, s...)
	}
	return b
}
