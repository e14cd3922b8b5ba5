package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer regexes of nearly every byte-level BPE tokenizer are
// one of a few well-known patterns. regexp2 runs them as a backtracking
// interpreter and spends most of an encode there, so for the known ones we
// match by hand. Each matcher follows the regex's alternatives in order,
// including the backtracking the regex would do, and is checked against
// regexp2 by TestFastSplitMatchesRegexp and FuzzFastSplit.

// Patterns with a hand-written matcher.
const (
	// qwenPattern: Qwen2/2.5/3 (digits one at a time).
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// llama3Pattern: Llama 3 and cl100k_base (digits in threes).
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// o200kPattern: o200k_base (case-aware words, contractions attached).
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

type fastSpec struct {
	gpt2     bool // GPT-2 layout; else the cl100k layout
	o200k    bool // o200k layout
	digitMax int  // cl100k layout: most digits per match
}

// fastSplitter returns a hand-written matcher for a pre-tokenizer regex it
// knows, or nil to use regexp2.
func fastSplitter(pattern string) func(s string, match func(start, end int)) {
	var p fastSpec
	switch pattern {
	case gpt2Pattern:
		p = fastSpec{gpt2: true}
	case qwenPattern:
		p = fastSpec{digitMax: 1}
	case llama3Pattern:
		p = fastSpec{digitMax: 3}
	case o200kPattern:
		p = fastSpec{o200k: true, digitMax: 3}
	default:
		return nil
	}
	return p.matches
}

func (p fastSpec) matches(s string, fn func(start, end int)) {
	for i := 0; i < len(s); {
		if end := p.at(s, i); end > i {
			fn(i, end)
			i = end
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
}

func isL(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isN(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

func isS(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// isP is [^\s\p{L}\p{N}].
func isP(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }

func runeAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// span returns the end of the run of runes from i that satisfy ok, taking
// at most max runes (0 = no limit).
func span(s string, i int, ok func(rune) bool, max int) int {
	for k := 0; max == 0 || k < max; k++ {
		r, n := runeAt(s, i)
		if n == 0 || !ok(r) {
			break
		}
		i += n
	}
	return i
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// contraction matches the regex's contractions ('s 't 're 've 'm 'll 'd)
// at i, where s[i] is an apostrophe.
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) {
		return i
	}
	c := s[i+1]
	if fold {
		c = lower(c)
	}
	switch c {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v', 'l':
		if i+2 >= len(s) {
			return i
		}
		d := s[i+2]
		if fold {
			d = lower(d)
		}
		if c == 'l' && d == 'l' || c != 'l' && d == 'e' {
			return i + 3
		}
	}
	return i
}

// at returns the end of the match starting at i, or i if none starts
// there.
func (p fastSpec) at(s string, i int) int {
	r0, n0 := runeAt(s, i)
	if p.o200k {
		return p.atO200k(s, i, r0, n0)
	}
	if r0 == '\'' {
		if e := contraction(s, i, !p.gpt2); e > i {
			return e
		}
	}
	r1, _ := runeAt(s, i+n0)
	if p.gpt2 {
		// ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+'
		j := i
		if r0 == ' ' {
			j = i + 1
			r0 = r1
		}
		for _, class := range []func(rune) bool{isL, isN, isP} {
			if class(r0) {
				return span(s, j, class, 0)
			}
		}
		if j > i { // the optional space led nowhere: try without it
			r0 = ' '
		}
	} else {
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if isL(r0) {
			return span(s, i, isL, 0)
		}
		if r0 != '\r' && r0 != '\n' && !isN(r0) && isL(r1) {
			return span(s, i+n0, isL, 0)
		}
		// \p{N}{1,max}
		if isN(r0) {
			return span(s, i, isN, p.digitMax)
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
		j := i
		if r0 == ' ' && isP(r1) {
			j = i + 1
		}
		if r, _ := runeAt(s, j); isP(r) {
			j = span(s, j, isP, 0)
			return span(s, j, func(r rune) bool { return r == '\r' || r == '\n' }, 0)
		}
	}
	return p.space(s, i, r0)
}

// space matches the whitespace alternatives at i.
func (p fastSpec) space(s string, i int, r0 rune) int {
	if !isS(r0) {
		return i
	}
	end := span(s, i, isS, 0)
	if !p.gpt2 {
		// \s*[\r\n]+ : backtracks to just after the run's last newline.
		for k := end - 1; k >= i; k-- {
			if s[k] == '\n' || s[k] == '\r' {
				return k + 1
			}
		}
	}
	// \s+(?!\S) : the whole run at the end of text, else all but its
	// last rune, if that leaves one.
	if end == len(s) {
		return end
	}
	_, nl := utf8.DecodeLastRuneInString(s[i:end])
	if end-nl > i {
		return end - nl
	}
	// \s+
	return end
}

// isUpper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], isLower
// [\p{Ll}\p{Lm}\p{Lo}\p{M}]: they overlap in Lm, Lo and M.
func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// optContraction is (?i:'s|'t|'re|'ve|'m|'ll|'d)? at j.
func optContraction(s string, j int) int {
	if j < len(s) && s[j] == '\'' {
		return contraction(s, j, true)
	}
	return j
}

// word1 is Upper*Lower+Contraction? at j. Upper* is greedy; if no Lower
// follows the run, the regex gives back run characters until one that is
// also Lower can serve as Lower+, which then ends there.
func word1(s string, j int) int {
	run := span(s, j, isUpper, 0)
	if r, _ := runeAt(s, run); isLower(r) {
		return optContraction(s, span(s, run, isLower, 0))
	}
	end := j
	for k := j; k < run; {
		r, n := runeAt(s, k)
		k += n
		if isLower(r) {
			end = k
		}
	}
	if end > j && end == run {
		return optContraction(s, end)
	}
	return end
}

// word2 is Upper+Lower*Contraction? at j; it is tried only after word1
// failed, so Lower* matches nothing.
func word2(s string, j int) int {
	run := span(s, j, isUpper, 0)
	if run == j {
		return j
	}
	return optContraction(s, span(s, run, isLower, 0))
}

func (p fastSpec) atO200k(s string, i int, r0 rune, n0 int) int {
	prefix := r0 != '\r' && r0 != '\n' && !isL(r0) && !isN(r0) && n0 > 0
	for _, word := range []func(string, int) int{word1, word2} {
		if prefix {
			if e := word(s, i+n0); e > i+n0 {
				return e
			}
		}
		if e := word(s, i); e > i {
			return e
		}
	}
	if isN(r0) {
		return span(s, i, isN, 3)
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
	j := i
	if r1, _ := runeAt(s, i+n0); r0 == ' ' && isP(r1) {
		j = i + 1
	}
	if r, _ := runeAt(s, j); isP(r) {
		j = span(s, j, isP, 0)
		return span(s, j, func(r rune) bool { return r == '\r' || r == '\n' || r == '/' }, 0)
	}
	return p.space(s, i, r0)
}
