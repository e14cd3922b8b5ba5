package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// tiktoken wraps one of OpenAI's encodings as shipped (embedded, no
// download) by github.com/tiktoken-go/tokenizer.
type tiktoken struct {
	name   string
	codec  tokenizer.Codec
	digest func() string
}

var _ Tokenizer = (*tiktoken)(nil)

// TiktokenNames are the encodings that Load accepts by name.
var TiktokenNames = []string{"o200k_base", "cl100k_base"}

func newTiktoken(name string) (*tiktoken, error) {
	var enc tokenizer.Encoding
	switch name {
	case "o200k_base":
		enc = tokenizer.O200kBase
	case "cl100k_base":
		enc = tokenizer.Cl100kBase
	default:
		return nil, fmt.Errorf("unknown tokenizer %q: use one of %s or the path of a HuggingFace tokenizer.json", name, strings.Join(TiktokenNames, ", "))
	}
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	t := &tiktoken{name: name, codec: c}
	t.digest = sync.OnceValue(t.computeDigest)
	return t, nil
}

func (t *tiktoken) Name() string   { return t.name }
func (t *tiktoken) Digest() string { return t.digest() }

// computeDigest hashes the decoded bytes of every id in order. The library
// does not expose its rank table, but decoding each id walks the same table,
// so two different vocabularies cannot give the same digest.
func (t *tiktoken) computeDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "tiktoken:%s\n", t.name)
	ids := make([]uint, 1)
	var misses []int
	for id := 0; id < 300000; id++ {
		ids[0] = uint(id)
		s, err := t.codec.Decode(ids)
		if err != nil || s == "" {
			misses = append(misses, id)
			if len(misses) > 4096 {
				break
			}
			continue
		}
		fmt.Fprintf(h, "%d:%x\n", id, s)
	}
	sort.Ints(misses)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (t *tiktoken) Encode(text string) []int {
	ids, _, err := t.codec.Encode(text)
	if err != nil {
		// ErrorModeNone never fails on input; keep the contract total anyway.
		return nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func (t *tiktoken) Count(text string) int {
	n, err := t.codec.Count(text)
	if err != nil {
		return len(t.Encode(text))
	}
	return n
}

func (t *tiktoken) Decode(ids []int) string {
	u := make([]uint, len(ids))
	for i, id := range ids {
		u[i] = uint(id)
	}
	s, _ := t.codec.Decode(u)
	return s
}
