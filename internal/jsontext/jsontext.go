// Package jsontext holds the pieces of JSON's grammar that the tool's two
// hand-written scanners share: the stream events' (replay/endpoint, fast
// on small objects) and the tokenizer.json's (workload/tokenize, fast on
// megabytes of vocabulary). Each scanner keeps its own walk and its own
// errors; white space, the number grammar, the \u escapes and the
// decoding of a string's escapes are written once, here. It imports no
// product package.
package jsontext

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// SpaceEnd returns the index of the first byte at or after i in b that
// is not JSON white space (space, tab, newline, carriage return), or
// len(b).
func SpaceEnd(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// NumberEnd checks the number at b[i:] against
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns the index
// just past it; when the bytes stop being a number first, it returns
// the index where they do and false.
func NumberEnd(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// digitsEnd returns the end of the run of ASCII digits at b[i:].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// IsHex4 reports whether b starts with four hex digits, the body of a \u
// escape.
func IsHex4(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// hex4 is the value of the four hex digits b starts with (IsHex4).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Unescape appends the decoded form of a string's body (the bytes between
// its quotes) to dst. The caller has checked every escape in raw: a
// backslash is followed by one of "\/bfnrt or by u and four hex digits.
// A surrogate pair written as two escapes is one character; a lone half
// is U+FFFD, as encoding/json decodes it.
func Unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			return append(dst, raw[i:]...)
		}
		dst = append(dst, raw[i:i+k]...)
		i += k
		c := raw[i+1]
		i += 2
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(utf8.RuneError)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(raw[i+2:])); dec != utf8.RuneError {
						r2 = dec
						i += 6
					}
				}
				r = r2
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
	}
	return dst
}
