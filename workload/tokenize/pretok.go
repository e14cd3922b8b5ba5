package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// gpt2Pattern is the split ByteLevel applies when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// Split behaviours, as tokenizers names them.
const (
	behRemoved = iota
	behIsolated
	behMergedWithPrevious
	behMergedWithNext
	behContiguous
)

var behaviorNames = map[string]int{
	"Removed":            behRemoved,
	"Isolated":           behIsolated,
	"MergedWithPrevious": behMergedWithPrevious,
	"MergedWithNext":     behMergedWithNext,
	"Contiguous":         behContiguous,
}

// preStep is one pre-tokenizer that runs on raw text: a Split (regex or
// literal), Digits, or the regex split of ByteLevel(use_regex).
type preStep struct {
	pattern   string // regex source, or literal when literal is true
	literal   bool
	digits    bool // Digits pre-tokenizer: pattern unused
	behavior  int
	invert    bool
	byteLevel bool // this is ByteLevel's own GPT-2 split

	re *regexp2.Regexp
	// fast, when set, is a hand-written matcher giving the same matches as
	// re for a well-known pattern; regexp2 is the reference it is tested
	// against (see TestFastSplitMatchesRegexp).
	fast func(s string, match func(start, end int))
}

func (s *preStep) describe() string {
	return fmt.Sprintf("lit=%v digits=%v beh=%d inv=%v bl=%v pat=%q", s.literal, s.digits, s.behavior, s.invert, s.byteLevel, s.pattern)
}

// matches calls fn with the [start, end) byte ranges s.pattern matches in
// text, left to right, skipping empty matches.
func (s *preStep) matches(text string, fn func(start, end int)) {
	switch {
	case s.fast != nil:
		s.fast(text, fn)
	case s.digits:
		individual := s.pattern == "individual"
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsNumber(r) {
				i += n
				continue
			}
			if individual {
				fn(i, i+n)
				i += n
				continue
			}
			j := i + n
			for j < len(text) {
				r, n := utf8.DecodeRuneInString(text[j:])
				if !unicode.IsNumber(r) {
					break
				}
				j += n
			}
			fn(i, j)
			i = j
		}
	case s.literal:
		if s.pattern == "" {
			return
		}
		for i := 0; ; {
			k := strings.Index(text[i:], s.pattern)
			if k < 0 {
				return
			}
			fn(i+k, i+k+len(s.pattern))
			i += k + len(s.pattern)
		}
	default:
		idx, err := s.re.FindAllStringIndex(text, -1)
		if err != nil {
			// Only a timeout can fail, and we set none.
			return
		}
		for _, m := range idx {
			if m[1] > m[0] {
				fn(m[0], m[1])
			}
		}
	}
}

// split cuts text into pieces the way tokenizers' Split does for this
// step's behaviour, calling fn with each non-empty piece in order.
func (s *preStep) split(text string, fn func(string)) {
	if text == "" {
		return
	}
	if s.behavior == behIsolated && !s.invert {
		// The common case (every byte-level tokenizer we know), without
		// building the segment list.
		last := 0
		s.matches(text, func(a, b int) {
			if a > last {
				fn(text[last:a])
			}
			fn(text[a:b])
			last = b
		})
		if last < len(text) {
			fn(text[last:])
		}
		return
	}
	type seg struct {
		a, b  int
		match bool
	}
	var segs []seg
	last := 0
	s.matches(text, func(a, b int) {
		if a > last {
			segs = append(segs, seg{last, a, s.invert})
		}
		segs = append(segs, seg{a, b, !s.invert})
		last = b
	})
	if last < len(text) {
		segs = append(segs, seg{last, len(text), s.invert})
	}
	var out []seg
	switch s.behavior {
	case behRemoved:
		for _, g := range segs {
			if !g.match {
				out = append(out, g)
			}
		}
	case behIsolated:
		out = segs
	case behMergedWithPrevious:
		prev := false
		for _, g := range segs {
			if g.match && !prev && len(out) > 0 {
				out[len(out)-1].b = g.b
			} else {
				out = append(out, g)
			}
			prev = g.match
		}
	case behMergedWithNext:
		prev := false
		for i := len(segs) - 1; i >= 0; i-- {
			g := segs[i]
			if g.match && !prev && len(out) > 0 {
				out[len(out)-1].a = g.a
			} else {
				out = append(out, g)
			}
			prev = g.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	case behContiguous:
		prev := false
		for _, g := range segs {
			if g.match == prev && len(out) > 0 {
				out[len(out)-1].b = g.b
			} else {
				out = append(out, g)
			}
			prev = g.match
		}
	}
	for _, g := range out {
		if g.b > g.a {
			fn(text[g.a:g.b])
		}
	}
}

// parsePreTokenizer turns the pre_tokenizer section into steps on raw
// text. It requires a ByteLevel pre-tokenizer, last (alone or at the end
// of a Sequence), since only then do the earlier steps see raw text and
// the model see bytes.
func parsePreTokenizer(raw json.RawMessage) (steps []preStep, prefix bool, err error) {
	type comp struct {
		Type           string            `json:"type"`
		PreTokenizers  []json.RawMessage `json:"pretokenizers"`
		Pattern        json.RawMessage   `json:"pattern"`
		Behavior       string            `json:"behavior"`
		Invert         bool              `json:"invert"`
		AddPrefixSpace bool              `json:"add_prefix_space"`
		UseRegex       *bool             `json:"use_regex"`
		Individual     bool              `json:"individual_digits"`
	}
	var list []json.RawMessage
	var top comp
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, false, fmt.Errorf("pre_tokenizer: %v", err)
	}
	if top.Type == "Sequence" {
		list = top.PreTokenizers
	} else {
		list = []json.RawMessage{raw}
	}
	sawByteLevel := false
	for i, r := range list {
		var c comp
		if err := json.Unmarshal(r, &c); err != nil {
			return nil, false, fmt.Errorf("pre_tokenizer: %v", err)
		}
		if sawByteLevel {
			return nil, false, fmt.Errorf("pre_tokenizer %q after ByteLevel is not supported (it would see byte-level symbols)", c.Type)
		}
		switch c.Type {
		case "ByteLevel":
			sawByteLevel = true
			prefix = c.AddPrefixSpace
			if c.UseRegex == nil || *c.UseRegex {
				st := preStep{pattern: gpt2Pattern, behavior: behIsolated, byteLevel: true}
				if err := st.compile(); err != nil {
					return nil, false, err
				}
				steps = append(steps, st)
			}
		case "Split":
			var p struct {
				Regex  *string `json:"Regex"`
				String *string `json:"String"`
			}
			if err := json.Unmarshal(c.Pattern, &p); err != nil || p.Regex == nil && p.String == nil {
				return nil, false, fmt.Errorf("pre_tokenizer[%d] Split: pattern must be {\"Regex\": …} or {\"String\": …}", i)
			}
			beh, ok := behaviorNames[c.Behavior]
			if !ok {
				return nil, false, fmt.Errorf("pre_tokenizer[%d] Split: unknown behavior %q", i, c.Behavior)
			}
			st := preStep{behavior: beh, invert: c.Invert}
			if p.Regex != nil {
				st.pattern = *p.Regex
			} else {
				st.pattern, st.literal = *p.String, true
			}
			if err := st.compile(); err != nil {
				return nil, false, fmt.Errorf("pre_tokenizer[%d] Split: %w", i, err)
			}
			steps = append(steps, st)
		case "Digits":
			st := preStep{digits: true, behavior: behContiguous}
			if c.Individual {
				st.pattern, st.behavior = "individual", behIsolated
			}
			steps = append(steps, st)
		case "Sequence":
			return nil, false, errors.New("pre_tokenizer: nested Sequence is not supported")
		default:
			return nil, false, fmt.Errorf("pre_tokenizer %q is not supported (only Split, Digits and ByteLevel); counts would not be exact", c.Type)
		}
	}
	if !sawByteLevel {
		return nil, false, fmt.Errorf("no ByteLevel pre-tokenizer: not byte-level BPE; %s", supportedKinds)
	}
	return steps, prefix, nil
}

func (s *preStep) compile() error {
	if s.literal || s.digits {
		return nil
	}
	// Compile a wrapped copy: regexp2 looks patterns up in a registry of
	// code-generated engines, and tiktoken-go registers one for the cl100k
	// pattern (which Llama 3 shares) that backtracks wrongly in
	// \s*[\r\n]+ ("a\n \nb" splits as "\n", " \n"). The group changes no
	// match but misses the registry, so we get the interpreter.
	re, err := regexp2.Compile("(?:"+s.pattern+")", regexp2.None)
	if err != nil {
		return fmt.Errorf("regex %q does not compile: %v", s.pattern, err)
	}
	s.re = re
	s.fast = fastSplitter(s.pattern)
	return nil
}

// ---- added tokens ----

// addedMatcher finds added tokens (special tokens such as <|im_end|> and
// any others the file lists) in text, leftmost-longest, as tokenizers'
// AddedVocabulary does.
type addedMatcher struct {
	raw, normalized addedSet
}

type addedSet struct {
	toks  []hfAddedToken
	first [256][]int // token indices by first byte, longest first
}

func newAddedMatcher(list []hfAddedToken) (*addedMatcher, error) {
	m := &addedMatcher{}
	for _, a := range list {
		if a.Content == "" {
			return nil, fmt.Errorf("added_tokens: id %d has empty content", a.ID)
		}
		set := &m.raw
		if a.Normalized {
			set = &m.normalized
		}
		set.toks = append(set.toks, a)
		c := a.Content[0]
		set.first[c] = append(set.first[c], len(set.toks)-1)
	}
	for _, set := range []*addedSet{&m.raw, &m.normalized} {
		for c := range set.first {
			l := set.first[c]
			for i := 1; i < len(l); i++ { // insertion sort, longest first
				for j := i; j > 0 && len(set.toks[l[j]].Content) > len(set.toks[l[j-1]].Content); j-- {
					l[j], l[j-1] = l[j-1], l[j]
				}
			}
		}
	}
	return m, nil
}

// split calls fn with the pieces of text: fn(seg, -1) for ordinary text
// (already normalized) and fn("", id) for an added token.
func (m *addedMatcher) split(text string, normalize func(string) string, fn func(seg string, id int)) {
	m.raw.find(text, func(seg string) {
		if normalize != nil {
			seg = normalize(seg)
		}
		m.normalized.find(seg, func(s string) { fn(s, -1) }, fn)
	}, fn)
}

func (set *addedSet) find(text string, plain func(string), tok func(string, int)) {
	if len(set.toks) == 0 {
		if text != "" {
			plain(text)
		}
		return
	}
	last := 0
	for i := 0; i < len(text); i++ {
		cands := set.first[text[i]]
		if len(cands) == 0 {
			continue
		}
		for _, ci := range cands {
			a := &set.toks[ci]
			if !strings.HasPrefix(text[i:], a.Content) {
				continue
			}
			start, end := i, i+len(a.Content)
			if a.SingleWord && (endsWithWord(text[:start]) || startsWithWord(text[end:])) {
				continue
			}
			if a.LStrip {
				for start > last {
					r, n := utf8.DecodeLastRuneInString(text[last:start])
					if !unicode.IsSpace(r) {
						break
					}
					start -= n
				}
			}
			if a.RStrip {
				for end < len(text) {
					r, n := utf8.DecodeRuneInString(text[end:])
					if !unicode.IsSpace(r) {
						break
					}
					end += n
				}
			}
			if start > last {
				plain(text[last:start])
			}
			tok("", a.ID)
			last = end
			i = end - 1
			break
		}
	}
	if last < len(text) {
		plain(text[last:])
	}
}

// isWordRune is Rust regex's \w, which tokenizers uses for single_word:
// alphabetic, marks, decimal digits, connector punctuation, joiners.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}

// ---- byte-level alphabet ----

// byteToRune is GPT-2's bytes_to_unicode: printable bytes stand for
// themselves, the rest are shifted to U+0100 and up, so every byte is a
// visible character in vocab files.
var byteToRune, runeToByte = func() ([256]rune, map[rune]byte) {
	var b2r [256]rune
	r2b := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			b2r[b] = rune(b)
		} else {
			b2r[b] = rune(256 + n)
			n++
		}
		r2b[b2r[b]] = byte(b)
	}
	return b2r, r2b
}()

// byteLevelDecode maps a vocabulary entry back to the bytes it stands for.
// A character outside the alphabet (only in malformed files) stands for
// its own UTF-8 bytes.
func byteLevelDecode(tok string) []byte {
	out := make([]byte, 0, len(tok))
	for _, r := range tok {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// ---- piece cache ----

// pieceCache remembers the ids of pieces already merged: prose repeats
// words, and BPE dominates the cost of a piece. It is bounded by clearing
// when full, which is cheap and keeps the hot words after a warm-up.
type pieceCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

const (
	pieceCacheMax    = 1 << 16
	pieceCacheMaxLen = 64 // bytes; longer pieces are rare and rarely repeat
)

func newPieceCache() *pieceCache { return &pieceCache{m: make(map[string][]int32)} }

func (c *pieceCache) get(piece string) ([]int32, bool) {
	if len(piece) > pieceCacheMaxLen {
		return nil, false
	}
	c.mu.RLock()
	ids, ok := c.m[piece]
	c.mu.RUnlock()
	return ids, ok
}

// ids is piece's ids: the cached ones, else those bpe merges into
// *scratch, which it remembers.
func (c *pieceCache) ids(piece string, scratch *[]int32, bpe func(string, []int32) []int32) []int32 {
	if ids, ok := c.get(piece); ok {
		return ids
	}
	*scratch = bpe(piece, (*scratch)[:0])
	c.put(piece, *scratch)
	return *scratch
}

func (c *pieceCache) put(piece string, ids []int32) {
	if len(piece) > pieceCacheMaxLen {
		return
	}
	// Clone both: piece points into the caller's text and ids into a
	// scratch buffer.
	k, v := strings.Clone(piece), append([]int32(nil), ids...)
	c.mu.Lock()
	if len(c.m) >= pieceCacheMax {
		clear(c.m)
	}
	c.m[k] = v
	c.mu.Unlock()
}
