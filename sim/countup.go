package sim

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// piece is one output token, rendered once per server so the hot path
// only copies bytes: its id, its text and the text already escaped for a
// JSON string.
type piece struct {
	id  int
	esc []byte
}

var (
	countUpsMu sync.Mutex
	countUps   = map[tokenize.Tokenizer]*countUp{}
)

// countUpFor shares one count-up per tokenizer across servers: building
// it means tokenizing the whole text, which takes a noticeable moment.
func countUpFor(tok tokenize.Tokenizer) *countUp {
	countUpsMu.Lock()
	defer countUpsMu.Unlock()
	// tokenize.Load returns one value per spec, so identity is the key.
	c, ok := countUps[tok]
	if !ok {
		c = &countUp{tok: tok}
		countUps[tok] = c
	}
	return c
}

// countUp is the answer every request gets: "1, 2, 3, …" in the server's
// tokenizer, one piece per token, grown on demand and shared by all
// requests (an answer of n tokens is the first n pieces).
type countUp struct {
	tok    tokenize.Tokenizer
	mu     sync.Mutex
	pieces atomic.Pointer[[]piece]
}

// get returns at least n pieces. The slice is never modified afterwards,
// so callers keep it without locking.
func (c *countUp) get(n int) []piece {
	if p := c.pieces.Load(); p != nil && len(*p) >= n {
		return *p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pieces.Load(); p != nil && len(*p) >= n {
		return *p
	}
	// Grow to a comfortable size: ten numbers take well under 40 tokens in
	// any BPE vocabulary, and re-tokenizing the whole text keeps the token
	// boundaries exactly what the tokenizer would give for the full answer.
	numbers := 256
	for numbers*4 < n+64 {
		numbers *= 2
	}
	for {
		var b strings.Builder
		for i := 1; i <= numbers; i++ {
			if i > 1 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(i))
		}
		ids := c.tok.Encode(b.String())
		// Drop the last token: with more text after it, BPE might have
		// merged it differently.
		if len(ids) > 0 {
			ids = ids[:len(ids)-1]
		}
		if len(ids) >= n {
			ps := make([]piece, len(ids))
			for i, id := range ids {
				q, _ := json.Marshal(c.tok.Decode([]int{id}))
				ps[i] = piece{id: id, esc: q[1 : len(q)-1]}
			}
			c.pieces.Store(&ps)
			return ps
		}
		numbers *= 2
	}
}

// text is the plain answer of the first n pieces (for non-streamed bodies).
func (c *countUp) text(n int) string { return c.textRange(0, n) }

// textRange is the plain text of pieces from to to.
func (c *countUp) textRange(from, to int) string {
	ps := c.get(to)
	ids := make([]int, 0, to-from)
	for _, p := range ps[from:to] {
		ids = append(ids, p.id)
	}
	return c.tok.Decode(ids)
}
