// Package safetext makes a string that came from a server (a model id, a
// finish reason, an error message) or from a file safe to show to a
// person. A hostile model id such as "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE
// LINE: 999999 tok/s\r" must not clear the screen, set the terminal's
// title, or add a line that looks like a result, on a terminal or in a
// Markdown table. Raw values stay in the trace and in JSON; only what is
// rendered for people goes through here, and it all goes through Show (or
// Markdown, which is Show plus the table syntax).
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Show escapes every control character (C0, DEL, C1: ESC, BEL, CR, LF,
// tab …), the Unicode line and paragraph separators and the bidirectional
// overrides (which reorder what a terminal shows), and bytes that are not
// UTF-8, as visible Go-style escapes (\x1b, \n, \u202e). A backslash is
// doubled only where it could be mistaken for such an escape, so plain
// Windows paths stay readable. Strings with nothing to escape are returned
// as they are, without allocating.
func Show(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Markdown is Show for a Markdown table cell or line: the pipe that would
// end the cell is escaped too. Angle brackets are left alone: our own
// figures write "p<0.001", and Markdown viewers sanitise HTML themselves.
func Markdown(s string) string {
	s = Show(s)
	if !strings.Contains(s, "|") {
		return s
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			if c < 0x80 {
				return false
			}
			// Non-ASCII: decide rune by rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) {
					return false
				}
			}
			return utf8.ValidString(s)
		}
	}
	return true
}

func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r == '\u2028' || r == '\u2029': // line and paragraph separators
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e' || r == '\u200f', r == '\u061c':
		return true // bidirectional controls
	}
	return false
}
