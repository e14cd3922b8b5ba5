package tokenize

import (
	"errors"
	"strings"
)

// rankIndex is a vocabulary file (format 2) read in place, as the binary
// holds it: a token's bytes by id, and an id by a token's bytes through an
// open-addressed table written with the file. Nothing is parsed, copied,
// hashed or allocated before the first lookup. Building the same tables
// when the command started (decompressing the file, splitting 200,000
// tokens into strings, hashing them into a table, digesting them) cost a
// cold process ~85 ms of CPU for o200k_base and ~48 ms for cl100k_base,
// more than the rest of a short analyze or workload build; every command
// that counts tokens paid it.
//
// The layout, integers as little-endian uint32:
//
//	"llmreplay vocabulary 2\n"
//	"sha256:<64 hex>\n"  the digest workloads record (tiktokenDigest, in
//	                     the tests)
//	n, size              ids, and slots (a power of two, at least 2n)
//	offsets[n+1]         token id is blob[offsets[id]:offsets[id+1]];
//	                     empty when no token has that id
//	slots[size]          id+1 of a token hashed there (vocabHash, linear
//	                     probing; of two ids with the same bytes, the
//	                     later), 0 for empty
//	blob                 the tokens' bytes
type rankIndex struct {
	data        string
	n           int
	offs, slots int // byte offsets of the tables in data
	blob        int
	mask        uint64
	digest      string
}

const (
	vocabMagic     = "llmreplay vocabulary 2\n"
	vocabDigestLen = len("sha256:") + 64
)

// vocabHash is FNV-1a: a fixed function, because the table is written
// once with the file (maphash's seeds change with every process). The
// keys are the vocabulary's own, so no input can lengthen a probe chain
// past the longest the tests measure on the embedded files.
func vocabHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func u32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// openVocab checks data's header and offsets (a fraction of a
// millisecond: the offsets are 4 bytes an id) and reads it in place.
func openVocab(data string) (*rankIndex, error) {
	h := len(vocabMagic)
	if !strings.HasPrefix(data, vocabMagic) || len(data) < h+vocabDigestLen+1+8 ||
		!strings.HasPrefix(data[h:], "sha256:") || data[h+vocabDigestLen] != '\n' {
		return nil, errors.New("not a vocabulary file")
	}
	p := h + vocabDigestLen + 1
	n, size := uint64(u32(data, p)), uint64(u32(data, p+4))
	p += 8
	if size == 0 || size&(size-1) != 0 || size < 2*n || uint64(len(data)-p) < 4*(n+1)+4*size {
		return nil, errors.New("vocabulary file: bad table sizes")
	}
	x := &rankIndex{data: data, n: int(n), offs: p, slots: p + 4*int(n+1), mask: size - 1,
		digest: data[h : h+vocabDigestLen]}
	x.blob = x.slots + 4*int(size)
	prev := u32(data, x.offs)
	if prev != 0 {
		return nil, errors.New("vocabulary file: bad offsets")
	}
	for i := 1; i <= x.n; i++ {
		o := u32(data, x.offs+4*i)
		if o < prev {
			return nil, errors.New("vocabulary file: bad offsets")
		}
		prev = o
	}
	if uint64(prev) != uint64(len(data)-x.blob) {
		return nil, errors.New("vocabulary file: the tokens' bytes do not end the file")
	}
	return x, nil
}

// token returns the bytes of id, which must be in [0, n).
func (x *rankIndex) token(id int32) string {
	i := x.offs + 4*int(id)
	return x.data[x.blob+int(u32(x.data, i)) : x.blob+int(u32(x.data, i+4))]
}

// get returns the id whose token is s.
func (x *rankIndex) get(s string) (int32, bool) {
	i := vocabHash(s) & x.mask
	for range x.mask + 1 {
		v := u32(x.data, x.slots+4*int(i))
		if v == 0 || int(v) > x.n {
			return 0, false
		}
		if x.token(int32(v-1)) == s {
			return int32(v - 1), true
		}
		i = (i + 1) & x.mask
	}
	return 0, false
}
