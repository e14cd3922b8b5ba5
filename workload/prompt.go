package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// The prompt is laid out so that its token count is a sum of known parts:
//
//	Topic: <salt words>. <opening> <filler prose …> .\n\n<instruction>
//	└head┘ └── salt ──┘ └────────────── middle ───────────┘└── tail ──┘
//
// Every byte-level BPE pre-tokenizer in use (tiktoken's o200k and cl100k
// patterns, Qwen's, Llama 3's) splits text before a space that precedes a
// letter, and keeps a lone "," or "." apart from the letters around it.
// So each filler word (with its leading space) and each punctuation mark in
// the middle is exactly one token, and the head and tail, whose edges are
// such split points, cost what they cost on their own. The builder counts
// from these known parts, then checks the whole prompt with the real
// tokenizer and repairs the filler length if a tokenizer disagrees.

// DefaultInstruction is the count-up task of the seeds: every stream does
// the same amount of work, capped by max_tokens.
const DefaultInstruction = "Ignore the text above. Count up from 1, one number after another, " +
	"separated by commas: 1, 2, 3, 4, 5, and so on. Keep counting and write nothing else."

const (
	promptHead = "Topic:"
	tailSep    = ".\n\n"
	// openingWords is how many words encode the request index right after
	// the salt (or after the shared part), so that no two requests share a
	// prefix past that point: len(words)^3 > 190 million distinct openings.
	openingWords = 3
)

// prefixMode says how much text requests share.
type prefixMode struct {
	kind string // "unique", "shared" or "sharedK"
	k    int    // tokens shared, for sharedK
}

func parsePrefix(s string) (prefixMode, error) {
	switch {
	case s == "" || s == "unique":
		return prefixMode{kind: "unique"}, nil
	case s == "shared":
		return prefixMode{kind: "shared"}, nil
	}
	if n, ok := strings.CutPrefix(s, "shared:"); ok {
		if k, err := strconv.Atoi(n); err == nil && k >= 1 {
			return prefixMode{kind: "sharedK", k: k}, nil
		}
	}
	// Anything else, shared:K with a K that is no positive count included.
	return prefixMode{}, fieldErr("Prefix", fmt.Sprintf("%q is not a prefix mode", s), "use unique, shared or shared:K with K a positive token count")
}

// promptKit holds everything that is the same for every prompt of one
// workload: the tokenizer, its filler words, and the measured fixed parts.
type promptKit struct {
	tok        tokenize.Tokenizer
	seed       int64
	words      []string // fillerWords that are one token under tok
	perm       []int    // seeded permutation of words, for openings
	salt       string   // " w1 w2 …", the default salt
	saltN      int
	headTokens int
	tailText   string
	tailTokens int
	prefix     prefixMode
}

func newPromptKit(tok tokenize.Tokenizer, seed int64, saltN int, prefix prefixMode) (*promptKit, error) {
	k := &promptKit{tok: tok, seed: seed, saltN: saltN, prefix: prefix}
	var split []string
	for _, w := range fillerWords {
		if tok.Count(" "+w) == 1 {
			k.words = append(k.words, w)
		} else {
			split = append(split, w)
		}
	}
	if len(split) > 0 && saltN > 0 {
		return nil, fieldErr("SaltWords", fmt.Sprintf("cannot be used with tokenizer %s, which splits %d of the salt words (e.g. %q), so salting at replay would change token counts", tok.Name(), len(split), split[0]), "build with 0 salt words")
	}
	if len(k.words) < 64 {
		return nil, fmt.Errorf("tokenizer %s keeps only %d of llmreplay's %d filler words as one token: it is not a byte-level BPE vocabulary for English text", tok.Name(), len(k.words), len(fillerWords))
	}
	for _, p := range []string{",", "."} {
		if tok.Count(p) != 1 {
			return nil, fmt.Errorf("tokenizer %s does not encode %q as one token: it is not a byte-level BPE vocabulary llmreplay supports", tok.Name(), p)
		}
	}
	if saltN > 0 {
		k.salt = " " + strings.Join(SaltWords(seed, saltN), " ")
	}
	k.headTokens = tok.Count(promptHead)
	k.tailText = tailSep + DefaultInstruction
	k.tailTokens = tok.Count(k.tailText)
	k.perm = make([]int, len(k.words))
	for i := range k.perm {
		k.perm[i] = i
	}
	shuffle(rand.New(rand.NewPCG(uint64(seed), streamPerm)), k.perm)
	return k, nil
}

// fixedTokens is what every prompt spends before its filler: head, salt,
// the "." after the salt, and the tail.
func (k *promptKit) fixedTokens() int {
	n := k.headTokens + k.saltN + k.tailTokens
	if k.saltN > 0 {
		n++
	}
	return n
}

// minTokens is the smallest prompt the kit can build in its prefix mode.
func (k *promptKit) minTokens() int {
	switch k.prefix.kind {
	case "shared":
		return k.fixedTokens() + 1
	case "sharedK":
		return max(k.prefix.k, k.fixedTokens()-k.tailTokens) + openingWords + k.tailTokens
	}
	return k.fixedTokens() + openingWords
}

// prose writes one-token elements: shuffled filler words with an
// occasional comma or full stop, never two marks in a row, and always a
// word last so the tail's "." cannot merge with a mark.
type prose struct {
	rng       *rand.Rand
	words     []string
	bag       []int
	pos       int
	sentence  int // words left in the current sentence
	lastPunct bool
}

func newProse(words []string, seed int64, stream uint64) *prose {
	p := &prose{rng: rand.New(rand.NewPCG(uint64(seed), stream)), words: words, lastPunct: true}
	p.bag = make([]int, len(words))
	for i := range p.bag {
		p.bag[i] = i
	}
	p.pos = len(p.bag)
	p.sentence = 6 + intN(p.rng, 14)
	return p
}

func (p *prose) word() string {
	if p.pos == len(p.bag) {
		shuffle(p.rng, p.bag)
		p.pos = 0
	}
	w := p.words[p.bag[p.pos]]
	p.pos++
	return w
}

// write appends exactly n tokens to b.
func (p *prose) write(b *strings.Builder, n int) {
	for ; n > 0; n-- {
		if !p.lastPunct && n > 1 {
			if p.sentence <= 0 {
				b.WriteByte('.')
				p.lastPunct = true
				p.sentence = 6 + intN(p.rng, 14)
				continue
			}
			if intN(p.rng, 9) == 0 {
				b.WriteByte(',')
				p.lastPunct = true
				continue
			}
		}
		b.WriteByte(' ')
		b.WriteString(p.word())
		p.sentence--
		p.lastPunct = false
	}
}

// opening writes the words that make request idx's prompt unique: the
// base-len(words) digits of idx, least significant first (so that requests
// next to each other differ at the first word), each mixed with the digits
// before it so small indices do not repeat one word. Digit k is recoverable
// from word k and the digits before it, so distinct indices give distinct
// openings.
func (k *promptKit) opening(b *strings.Builder, idx int) {
	l := len(k.words)
	d0, d1, d2 := idx%l, idx/l%l, idx/l/l%l
	for _, i := range []int{d0, (d1 + 3*d0 + 101) % l, (d2 + 7*d0 + 13*d1 + 211) % l} {
		b.WriteByte(' ')
		b.WriteString(k.words[k.perm[i]])
	}
}

// built is one prompt with its salt span.
type built struct {
	text string
	salt Span
}

// build makes request idx's prompt of exactly n tokens. hashIDs, when set,
// lay the filler out as blocks of blockSize tokens keyed by hash id.
func (k *promptKit) build(n, idx int, hashIDs []int64, blockSize int) (built, error) {
	if n < k.minTokens() {
		return built{}, fmt.Errorf("%d input tokens cannot hold the count-up instruction: use at least %d (tokenizer %s)", n, k.minTokens(), k.tok.Name())
	}
	adjust := 0
	for attempt := 0; ; attempt++ {
		bl := k.layout(n, idx, hashIDs, blockSize, adjust)
		got := k.tok.Count(bl.text)
		if got == n {
			return bl, nil
		}
		if attempt == 3 {
			return built{}, fmt.Errorf("could not make a prompt of exactly %d tokens with tokenizer %s (got %d): its pre-tokenizer does not split text the way byte-level BPE vocabularies do", n, k.tok.Name(), got)
		}
		adjust += n - got
	}
}

// layout writes the prompt from known counts; adjust shortens or
// lengthens the last stretch of filler when a tokenizer disagreed.
func (k *promptKit) layout(n, idx int, hashIDs []int64, blockSize, adjust int) built {
	var b strings.Builder
	b.Grow(n*7 + 256)
	b.WriteString(promptHead)
	var salt Span
	if k.saltN > 0 {
		salt = Span{Start: b.Len(), Words: k.saltN}
		b.WriteString(k.salt)
		salt.End = b.Len()
		b.WriteByte('.')
	}
	lead := k.fixedTokens() - k.tailTokens // tokens before the middle's own text
	middle := n - k.fixedTokens() + adjust
	switch {
	case len(hashIDs) > 0:
		left := middle
		for _, h := range hashIDs {
			if left <= 0 {
				break
			}
			m := min(blockSize, left)
			newProse(k.words, k.seed, streamBlock|uint64(h)&(streamBlock-1)).write(&b, m)
			left -= m
		}
		if left > 0 {
			newProse(k.words, k.seed, streamRequest|uint64(idx)).write(&b, left)
		}
	case k.prefix.kind == "shared":
		newProse(k.words, k.seed, streamShared).write(&b, middle)
	case k.prefix.kind == "sharedK":
		shared := max(k.prefix.k-lead, 0)
		if shared > 0 {
			newProse(k.words, k.seed, streamShared).write(&b, shared)
		}
		k.opening(&b, idx)
		newProse(k.words, k.seed, streamRequest|uint64(idx)).write(&b, max(middle-shared-openingWords, 0))
	default:
		k.opening(&b, idx)
		newProse(k.words, k.seed, streamRequest|uint64(idx)).write(&b, max(middle-openingWords, 0))
	}
	b.WriteString(k.tailText)
	return built{text: b.String(), salt: salt}
}

// reference returns "1, 2, 3, …" just long enough to be at least want
// tokens under the kit's tokenizer.
func (k *promptKit) reference(want int) string {
	text := func(m int) string {
		var b strings.Builder
		for i := 1; i <= m; i++ {
			if i > 1 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(i))
		}
		return b.String()
	}
	// After the first, each number costs at least two tokens (the comma
	// and the number; pre-tokenizers never merge them), so want/2+1
	// numbers always suffice; binary search for the fewest.
	lo, hi := 1, want/2+1
	for lo < hi {
		mid := (lo + hi) / 2
		if k.tok.Count(text(mid)) >= want {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return text(lo)
}
