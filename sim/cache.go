package sim

import "container/list"

// prefixCache remembers which prompt prefixes have been prefilled, as a
// bounded LRU of token-block hashes. A block's hash chains the hash of the
// block before it, so a hit on block i implies the whole prefix up to i is
// identical, the way vLLM's automatic prefix caching and llama.cpp's slot
// cache only reuse a common leading run of tokens.
type prefixCache struct {
	capacity int
	ll       *list.List // front = most recently used; values are uint64 hashes
	items    map[uint64]*list.Element
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, ll: list.New(), items: make(map[uint64]*list.Element)}
}

// blockHashes returns the chained FNV-1a hash of every full block of ids.
// A partial last block is never cached, as in the engines modelled.
func blockHashes(ids []int, block int) []uint64 {
	if block <= 0 {
		return nil
	}
	n := len(ids) / block
	out := make([]uint64, n)
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for b := 0; b < n; b++ {
		for _, id := range ids[b*block : (b+1)*block] {
			v := uint64(id)
			for k := 0; k < 4; k++ {
				h ^= v & 0xff
				h *= prime
				v >>= 8
			}
		}
		out[b] = h
	}
	return out
}

// lookup returns how many leading blocks of hashes are cached and marks
// them recently used.
func (c *prefixCache) lookup(hashes []uint64) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, h := range hashes {
		e, ok := c.items[h]
		if !ok {
			break
		}
		c.ll.MoveToFront(e)
		n++
	}
	return n
}

// insert records hashes as computed, evicting the least recently used
// blocks beyond capacity.
func (c *prefixCache) insert(hashes []uint64) {
	if c == nil || c.capacity <= 0 {
		return
	}
	for _, h := range hashes {
		if e, ok := c.items[h]; ok {
			c.ll.MoveToFront(e)
			continue
		}
		c.items[h] = c.ll.PushFront(h)
		for c.ll.Len() > c.capacity {
			old := c.ll.Back()
			c.ll.Remove(old)
			delete(c.items, old.Value.(uint64))
		}
	}
}

func (c *prefixCache) len() int {
	if c == nil {
		return 0
	}
	return c.ll.Len()
}
