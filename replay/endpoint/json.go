package endpoint

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/llmreplay/llmreplay/internal/jsontext"
)

// jscan is a validating, pull-style reader of one JSON document. The
// adapters use it instead of encoding/json because a streamed event is read
// once, for two or three fields, hundreds of thousands of times a second: a
// scan that skips what it does not need costs no allocation, where a decode
// into a struct costs several per event.
//
// It accepts exactly the JSON grammar (RFC 8259) with two leniencies, both
// about bytes inside strings, where the alternative would be to lose a
// server's text: raw control bytes are kept (encoding/json rejects them),
// and invalid UTF-8 is kept as sent (encoding/json replaces it with U+FFFD).
// Escapes, including surrogate pairs, decode as encoding/json decodes them;
// a differential fuzz test holds it to that.
type jscan struct {
	b     []byte
	i     int
	err   string // first syntax error, "" if none
	errAt int    // where it was found
	eof   bool   // it was running out of input: more bytes might have fixed it
	depth int
	kbuf  []byte // unescaped object keys
}

// maxDepth matches encoding/json's nesting limit, so the recursive skip
// cannot exhaust the stack on "[[[[…".
const maxDepth = 10000

func (s *jscan) reset(b []byte) {
	s.b, s.i, s.err, s.errAt, s.eof, s.depth = b, 0, "", 0, false, 0
}

// fail records the first error and stops the scan. Paths that fail for want
// of input move s.i to the end first, so truncated can tell.
func (s *jscan) fail(msg string) {
	if s.err == "" {
		s.err, s.errAt, s.eof = msg, s.i, s.i >= len(s.b)
	}
	s.i = len(s.b)
}

// truncated reports whether the document failed only because it ended too
// soon: the first line of a JSON value spread over several lines.
func (s *jscan) truncated() bool { return s.err != "" && s.eof }

func (s *jscan) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // compact JSON: the usual case
	}
	s.i = jsontext.SpaceEnd(s.b, s.i)
}

// peek returns the next byte after white space, or 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end checks that nothing but white space follows the document.
func (s *jscan) end() {
	s.ws()
	if s.i < len(s.b) && s.err == "" {
		s.fail("data after the JSON value")
	}
}

// enter consumes c ('{' or '[') if it comes next.
func (s *jscan) enter(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxDepth {
		s.fail("nested too deep")
		return false
	}
	return true
}

// key returns the next key of the object being read, after which the value
// is to be read; n is the number of keys already read. It returns false at
// the object's end or on an error. The key is valid until the next call.
func (s *jscan) key(n int) ([]byte, bool) {
	c := s.peek()
	if c == '}' {
		s.i++
		s.depth--
		return nil, false
	}
	if n > 0 {
		if c != ',' {
			s.fail("expected ',' or '}' in an object")
			return nil, false
		}
		s.i++
		c = s.peek()
	}
	if c != '"' {
		s.fail("expected a string key in an object")
		return nil, false
	}
	raw, esc := s.rawString()
	if s.err != "" {
		return nil, false
	}
	if esc {
		s.kbuf = jsontext.Unescape(s.kbuf[:0], raw)
		raw = s.kbuf
	}
	if s.peek() != ':' {
		s.fail("expected ':' after an object key")
		return nil, false
	}
	s.i++
	return raw, true
}

// elem reports whether another element of the array being read follows;
// n is the number of elements already read.
func (s *jscan) elem(n int) bool {
	c := s.peek()
	if c == ']' {
		s.i++
		s.depth--
		return false
	}
	if n > 0 {
		if c != ',' {
			s.fail("expected ',' or ']' in an array")
			return false
		}
		s.i++
	} else if c == 0 {
		s.fail("unexpected end of JSON input")
		return false
	}
	return true
}

// rawString reads a string at s.i (which must be '"') and returns its bytes
// between the quotes, and whether they hold an escape. Escapes are checked
// here, decoded only by whoever needs the value.
func (s *jscan) rawString() (raw []byte, esc bool) {
	start := s.i + 1
	b := s.b
	j := stringEnd(b, start)
	if j < len(b) && b[j] == '"' {
		s.i = j + 1
		return b[start:j], false
	}
	if j >= len(b) {
		s.i = len(b)
		s.fail("unterminated string")
		return nil, false
	}
	// Slow path: walk the escapes, since a quote may be escaped.
	i := start
	for i < len(b) {
		switch b[i] {
		case '"':
			s.i = i + 1
			return b[start:i], true
		case '\\':
			if i+1 >= len(b) {
				s.i = len(b)
				s.fail("unterminated string")
				return nil, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					s.i = len(b)
					s.fail("unterminated string")
					return nil, false
				}
				if !jsontext.IsHex4(b[i+2 : i+6]) {
					s.fail(`invalid \u escape in a string`)
					return nil, false
				}
				i += 6
			default:
				s.fail("invalid escape in a string")
				return nil, false
			}
		default:
			i++
		}
	}
	s.i = len(b)
	s.fail("unterminated string")
	return nil, false
}

// stringEnd returns the index of the first '"' or '\\' in b at or after j,
// or len(b). Most strings in a chunk are short keys and ids: eight bytes at
// a time beats IndexByte's call until a string gets long.
func stringEnd(b []byte, j int) int {
	for lim := j + 64; j+8 <= len(b); j += 8 {
		if j >= lim {
			k := bytes.IndexByte(b[j:], '"')
			if k < 0 {
				k = len(b) - j
			}
			if e := bytes.IndexByte(b[j:j+k], '\\'); e >= 0 {
				return j + e
			}
			return j + k
		}
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for j < len(b) && b[j] != '"' && b[j] != '\\' {
		j++
	}
	return j
}

// quoteOrBackslash returns a word with the high bit set in each byte of x
// that is '"' or '\\' (and possibly in bytes after the first such one: only
// the lowest set bit is exact, which is all the caller uses).
func quoteOrBackslash(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	s := x ^ (ones * '\\')
	return ((q-ones)&^q | (s-ones)&^s) & highs
}

// str reads a string or null. For a string it returns its decoded bytes,
// unescaped into *buf only if it holds escapes (else a slice of the input).
// ok is false if the value is neither (nothing is consumed then).
func (s *jscan) str(buf *[]byte) (v []byte, null, ok bool) {
	switch s.peek() {
	case '"':
		raw, esc := s.rawString()
		if esc {
			*buf = jsontext.Unescape((*buf)[:0], raw)
			return *buf, false, true
		}
		return raw, false, true
	case 'n':
		return nil, true, s.literal("null")
	}
	return nil, false, false
}

func (s *jscan) literal(lit string) bool {
	rest := s.b[s.i:]
	if !bytes.HasPrefix(rest, []byte(lit)) {
		if len(rest) < len(lit) && bytes.HasPrefix([]byte(lit), rest) {
			s.i = len(s.b)
		}
		s.fail("invalid literal")
		return false
	}
	s.i += len(lit)
	return true
}

// null consumes a null if one comes next.
func (s *jscan) null() bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	return false
}

// boolean reads true or false; ok is false (nothing consumed) otherwise.
func (s *jscan) boolean() (v, ok bool) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, false
}

// number reads a JSON number and returns its text; ok is false (nothing
// consumed) if none comes next.
func (s *jscan) number() ([]byte, bool) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		return nil, false
	}
	start := s.i
	end, ok := jsontext.NumberEnd(s.b, start)
	s.i = end
	if !ok {
		s.fail("invalid number")
		return nil, false
	}
	return s.b[start:end], true
}

// skip reads and discards one value of any kind, checking its syntax.
func (s *jscan) skip() {
	switch c := s.peek(); c {
	case '{':
		s.enter('{')
		for n := 0; ; n++ {
			if _, ok := s.key(n); !ok {
				return
			}
			s.skip()
		}
	case '[':
		s.enter('[')
		for n := 0; s.elem(n); n++ {
			s.skip()
		}
	case '"':
		s.rawString()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case 0:
		s.fail("unexpected end of JSON input")
	default:
		if _, ok := s.number(); !ok {
			s.fail("invalid character " + quoteByte(c) + " looking for a value")
		}
	}
}

// raw skips one value and returns its text.
func (s *jscan) raw() []byte {
	s.ws()
	if c := s.peek(); c == '-' || c >= '0' && c <= '9' {
		num, _ := s.number() // counts: the usual case
		return num
	}
	start := s.i
	s.skip()
	if s.err != "" {
		return nil
	}
	return s.b[start:s.i]
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return "0x" + string([]byte{hex[c>>4], hex[c&15]})
}

// atoi parses an integer number's text (as number returned it); ok is false
// for fractions, exponents and values that overflow int64.
func atoi(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}
