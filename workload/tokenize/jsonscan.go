package tokenize

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/llmreplay/llmreplay/internal/jsontext"
)

// A tokenizer.json is 5-30 MB, nearly all of it model.vocab and
// model.merges. encoding/json takes half a second on those and, under the
// race detector (which every test run uses), half a minute, so this file
// parses those two by hand and leaves the small sections to encoding/json.
// The scanner validates everything it passes over, so a corrupt file is
// still an error, never a panic or a silent partial read.

type jsonScanner struct {
	data []byte
	pos  int
}

// maxJSONDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxJSONDepth = 512

func (s *jsonScanner) errf(format string, args ...any) error {
	return fmt.Errorf("not valid JSON at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) ws() { s.pos = jsontext.SpaceEnd(s.data, s.pos) }

// expect consumes c after optional white space.
func (s *jsonScanner) expect(c byte) error {
	s.ws()
	if s.pos >= len(s.data) {
		return s.errf("unexpected end, want %q", c)
	}
	if s.data[s.pos] != c {
		return s.errf("found %q, want %q", s.data[s.pos], c)
	}
	s.pos++
	return nil
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// str parses a string; the opening quote is next.
func (s *jsonScanner) str() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			v := string(s.data[start:s.pos])
			s.pos++
			return v, nil
		case c == '\\':
			return s.strSlow(start)
		case c < 0x20:
			return "", s.errf("control character in string")
		}
		s.pos++
	}
	return "", s.errf("unterminated string")
}

// strSlow finishes a string that has escapes, from its first byte start:
// it checks the rest of the string, then decodes it whole.
func (s *jsonScanner) strSlow(start int) (string, error) {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw := s.data[start:s.pos]
			s.pos++
			return string(jsontext.Unescape(make([]byte, 0, len(raw)), raw)), nil
		case c < 0x20:
			return "", s.errf("control character in string")
		case c != '\\':
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.data) {
			return "", s.errf("unterminated escape")
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if !jsontext.IsHex4(s.data[s.pos:]) {
				return "", s.errf("bad \\u escape")
			}
			s.pos += 4
		default:
			return "", s.errf("bad escape \\%c", e)
		}
	}
	return "", s.errf("unterminated string")
}

// integer parses a JSON number that must be an integer.
func (s *jsonScanner) integer() (int, error) {
	s.ws()
	start := s.pos
	if err := s.number(); err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(string(s.data[start:s.pos]))
	if err != nil {
		return 0, s.errf("want an integer id")
	}
	return v, nil
}

// elements reads the items of a list whose opening byte is read, up to
// and including close: none, or items (each read by item) separated by
// commas.
func (s *jsonScanner) elements(close byte, item func() error) error {
	if s.peek() == close {
		s.pos++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if s.peek() != ',' {
			return s.expect(close)
		}
		s.pos++
	}
}

// members reads the members of an object whose '{' is read, up to and
// including its '}': each member's key, its colon, then value to read
// what follows.
func (s *jsonScanner) members(value func(key string) error) error {
	return s.elements('}', func() error {
		k, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		return value(k)
	})
}

// skip passes over one value, checking its syntax.
func (s *jsonScanner) skip(depth int) error {
	if depth > maxJSONDepth {
		return s.errf("nested deeper than %d", maxJSONDepth)
	}
	switch c := s.peek(); {
	case c == '"':
		_, err := s.str()
		return err
	case c == '{':
		s.pos++
		return s.members(func(string) error { return s.skip(depth + 1) })
	case c == '[':
		s.pos++
		return s.elements(']', func() error { return s.skip(depth + 1) })
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == 0:
		return s.errf("unexpected end")
	default:
		return s.errf("unexpected %q", c)
	}
}

func (s *jsonScanner) literal(w string) error {
	if len(s.data)-s.pos < len(w) || string(s.data[s.pos:s.pos+len(w)]) != w {
		return s.errf("want %s", w)
	}
	s.pos += len(w)
	return nil
}

// number checks -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?.
func (s *jsonScanner) number() error {
	end, ok := jsontext.NumberEnd(s.data, s.pos)
	s.pos = end
	if !ok {
		return s.errf("bad number")
	}
	return nil
}

// objectSpans reads an object and returns each member's raw value (later
// members win, as in encoding/json). The value of every member is
// syntax-checked.
func objectSpans(data []byte) (map[string][]byte, error) {
	s := &jsonScanner{data: data}
	out := map[string][]byte{}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	err := s.members(func(k string) error {
		s.ws()
		start := s.pos
		if err := s.skip(1); err != nil {
			return err
		}
		out[k] = data[start:s.pos]
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.ws(); s.pos != len(data) {
		return nil, s.errf("data after the end of the object")
	}
	return out, nil
}

// parseVocab reads {"token": id, …}.
func parseVocab(data []byte) (map[string]int, error) {
	s := &jsonScanner{data: data}
	if s.peek() != '{' {
		return nil, errors.New("model.vocab is not a map of token to id")
	}
	s.pos++
	out := make(map[string]int, len(data)/16)
	err := s.members(func(k string) error {
		id, err := s.integer()
		if err != nil {
			return err
		}
		out[k] = id
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	return out, nil
}

// parseMergeList reads merges in either spelling tokenizers has used:
// "a b" strings, or ["a", "b"] pairs (newer files, which allow spaces in
// tokens).
func parseMergeList(data []byte) ([][2]string, error) {
	s := &jsonScanner{data: data}
	if c := s.peek(); c == 'n' {
		return nil, s.literal("null")
	} else if c != '[' {
		return nil, errors.New("model.merges is not a list")
	}
	s.pos++
	out := make([][2]string, 0, len(data)/12)
	if s.peek() == ']' {
		return out, nil
	}
	for i := 0; ; i++ {
		var pair [2]string
		switch s.peek() {
		case '"':
			v, err := s.str()
			if err != nil {
				return nil, fmt.Errorf("model.merges: %w", err)
			}
			a, b, ok := cutSpace(v)
			if !ok {
				return nil, fmt.Errorf("model.merges[%d] = %q is not two tokens separated by a space", i, v)
			}
			pair = [2]string{a, b}
		case '[':
			s.pos++
			for k := range 2 {
				if k == 1 {
					if err := s.expect(','); err != nil {
						return nil, fmt.Errorf("model.merges[%d] is not a pair of tokens: %w", i, err)
					}
				}
				v, err := s.str()
				if err != nil {
					return nil, fmt.Errorf("model.merges[%d] is not a pair of tokens: %w", i, err)
				}
				pair[k] = v
			}
			if err := s.expect(']'); err != nil {
				return nil, fmt.Errorf("model.merges[%d] is not a pair of tokens: %w", i, err)
			}
		default:
			return nil, fmt.Errorf("model.merges[%d] is neither \"a b\" nor [\"a\", \"b\"]", i)
		}
		out = append(out, pair)
		if s.peek() == ',' {
			s.pos++
			continue
		}
		if err := s.expect(']'); err != nil {
			return nil, fmt.Errorf("model.merges: %w", err)
		}
		return out, nil
	}
}

func cutSpace(v string) (a, b string, ok bool) {
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			a, b = v[:i], v[i+1:]
			for j := 0; j < len(b); j++ {
				if b[j] == ' ' {
					return "", "", false
				}
			}
			return a, b, a != "" && b != ""
		}
	}
	return "", "", false
}
