package tokenize

import (
	"fmt"
	"strings"
	"sync"
)

// tiktoken is one of OpenAI's encodings. The vocabulary is
// github.com/tiktoken-go/tokenizer's (copied into vocab/, see
// vocabfile.go), but encoding is done here: that library's generated regex engines (registered with
// regexp2 by pattern) give up \s*[\r\n]+ too early, so "a\n \nb" splits
// into "\n", " \n" where OpenAI's tiktoken keeps "\n \n" whole, and the
// counts differ. We split with our own matchers (checked against regexp2's
// interpreter) and merge by rank exactly as tiktoken's byte_pair_merge.
type tiktoken struct {
	name    string
	pattern string
	split   func(s string, fn func(start, end int))
	tables  func() *rankIndex // opened on first use
	cache   *pieceCache
}

var _ Tokenizer = (*tiktoken)(nil)

// TiktokenNames are the encodings that Load accepts by name.
var TiktokenNames = []string{"o200k_base", "cl100k_base"}

func newTiktoken(name string) (*tiktoken, error) {
	enc, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("unknown tokenizer %q: use one of %s or the path of a HuggingFace tokenizer.json", name, strings.Join(TiktokenNames, ", "))
	}
	t := &tiktoken{name: name, pattern: enc.pattern, split: fastSplitter(enc.pattern), cache: newPieceCache()}
	t.tables = sync.OnceValue(t.buildTables)
	return t, nil
}

func (t *tiktoken) Name() string   { return t.name }
func (t *tiktoken) Digest() string { return t.tables().digest }

// buildTables opens the embedded vocabulary (vocabfile.go), read in place.
func (t *tiktoken) buildTables() *rankIndex {
	x, err := readVocab(t.name)
	if err != nil {
		// The files are compiled in and checked by the tests: a failure
		// here is a broken build, not an input.
		panic(fmt.Sprintf("tokenizer %s: embedded vocabulary: %v", t.name, err))
	}
	return x
}

// Encode returns the ids of text; special tokens such as <|endoftext|> are
// encoded as the plain text they are. Invalid UTF-8 is replaced by U+FFFD
// first, as OpenAI's API does when it decodes the request.
func (t *tiktoken) Encode(text string) []int { return encodeAll(t.each, text) }

func (t *tiktoken) Count(text string) int { return countAll(t.each, text) }

func (t *tiktoken) Decode(ids []int) string {
	x := t.tables()
	return decode(x.n, func(id int) string { return x.token(int32(id)) }, ids)
}

func (t *tiktoken) each(text string, emit func([]int32)) {
	x := t.tables()
	var scratch []int32
	bpe := x.bytePairMerge
	t.split(text, func(a, b int) {
		piece := text[a:b]
		if id, ok := x.get(piece); ok {
			one := [1]int32{id}
			emit(one[:])
			return
		}
		emit(t.cache.ids(piece, &scratch, bpe))
	})
}

// bytePairMerge splits piece into tokens the way tiktoken does: start from
// single bytes and repeatedly join the adjacent pair whose concatenation
// has the lowest rank (leftmost on ties) until no pair is in the
// vocabulary. A heap keeps long pieces (runs of spaces) from going
// quadratic; popping by (rank, position) makes the same choices.
func (x *rankIndex) bytePairMerge(piece string, out []int32) []int32 {
	n := len(piece)
	// Parts are [start[i], start[next[i]]); next[i] == n means the end.
	next, prev := links(n)
	end := func(i int32) int32 {
		if next[i] >= int32(n) {
			return int32(n)
		}
		return next[i]
	}
	mergeLong(next, prev, func(i, j int32) (cand, bool) {
		r, ok := x.get(piece[i:end(j)])
		return cand{rank: r, pos: i, left: j, right: end(j)}, ok
	}, func(c cand, j int32) bool {
		return j == c.left && end(j) == c.right
	}, nil)
	for i := int32(0); i < int32(n); i = next[i] {
		r, ok := x.get(piece[i:end(i)])
		if !ok {
			// Every single byte is in both vocabularies; keep the
			// contract total anyway.
			continue
		}
		out = append(out, r)
	}
	return out
}

// links are the next and prev of n parts not yet merged.
func links(n int) (next, prev []int32) {
	next, prev = make([]int32, n), make([]int32, n)
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	return next, prev
}

// mergeLong merges a piece's parts, linked by next and prev (next[i] is n
// after the last), the way both BPEs do on pieces too long to rescan
// after each merge: a heap of candidate merges ordered by (rank,
// position), stale entries skipped when popped, as tokenizers does.
// pair(i, j) is the candidate merge of part i with the part j after it,
// if they merge; stands(c, j) says whether a popped candidate's parts are
// still the ones it was pushed for; join, when not nil, records the merge
// of c before part j becomes part of part i. The surviving parts are 0,
// next[0], … until n.
func mergeLong(next, prev []int32, pair func(i, j int32) (cand, bool), stands func(c cand, j int32) bool, join func(c cand)) {
	n := int32(len(next))
	var h mergeHeap
	try := func(i int32) {
		if i < 0 || next[i] >= n {
			return
		}
		if c, ok := pair(i, next[i]); ok {
			h.push(c)
		}
	}
	for i := range n - 1 {
		try(i)
	}
	dead := make([]bool, n)
	for h.len() > 0 {
		c := h.pop()
		i := c.pos
		if dead[i] {
			continue
		}
		j := next[i]
		if j >= n || !stands(c, j) {
			continue // stale: a neighbour merged since this was pushed
		}
		if join != nil {
			join(c)
		}
		dead[j] = true
		next[i] = next[j]
		if next[j] < n {
			prev[next[j]] = i
		}
		if p := prev[i]; p >= 0 {
			try(p)
		}
		try(i)
	}
}

// cand is a possible merge of the part at pos with the one after it.
// left and right pin the parts' boundaries at push time, to spot stale
// entries.
type cand struct {
	rank, pos, left, right int32
}

type mergeHeap struct{ h []cand }

func (m *mergeHeap) len() int { return len(m.h) }

func candLess(a, b cand) bool { return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos }

func (m *mergeHeap) push(c cand) {
	m.h = append(m.h, c)
	for i := len(m.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !candLess(m.h[i], m.h[p]) {
			break
		}
		m.h[i], m.h[p] = m.h[p], m.h[i]
		i = p
	}
}

func (m *mergeHeap) pop() cand {
	h := m.h
	top := h[0]
	h[0] = h[len(h)-1]
	h = h[:len(h)-1]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < len(h) && candLess(h[l], h[s]) {
			s = l
		}
		if r < len(h) && candLess(h[r], h[s]) {
			s = r
		}
		if s == i {
			break
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
	m.h = h
	return top
}
