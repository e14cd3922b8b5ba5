package tokenize

import (
	"hash/maphash"
	"math/bits"
)

// rankIndex finds a token's id by its bytes: an open-addressed table of
// ids into idBytes, probed linearly. A map[string]int32 of the ~200,000
// tokens of o200k_base cost most of a short command's CPU (analyze of a
// small trace spent 57% of its time building the tables, a third of that
// allocating and clearing the map); this table is one []int32 and the
// strings idBytes already holds.
type rankIndex struct {
	seed  maphash.Seed
	slots []int32 // id+1, 0 for empty; len is a power of two
	mask  uint64
	bytes []string // idBytes: the token of each id
}

// newRankIndex sizes the table for n tokens at most half full.
func newRankIndex(n int, idBytes []string) *rankIndex {
	size := uint64(1) << bits.Len(uint(2*n))
	return &rankIndex{seed: maphash.MakeSeed(), slots: make([]int32, size), mask: size - 1, bytes: idBytes}
}

// put indexes id under s, replacing an earlier id with the same bytes (as
// a map assignment would). idBytes[id] must be s.
func (x *rankIndex) put(s string, id int32) {
	for i := maphash.String(x.seed, s) & x.mask; ; i = (i + 1) & x.mask {
		v := x.slots[i]
		if v == 0 || x.bytes[v-1] == s {
			x.slots[i] = id + 1
			return
		}
	}
}

// get returns the id whose token is s.
func (x *rankIndex) get(s string) (int32, bool) {
	for i := maphash.String(x.seed, s) & x.mask; ; i = (i + 1) & x.mask {
		v := x.slots[i]
		if v == 0 {
			return 0, false
		}
		if x.bytes[v-1] == s {
			return v - 1, true
		}
	}
}
