// Package safetext makes a string that came from a server (a model id, a
// finish reason, an error message) or from a file safe to show to a
// person. A hostile model id such as "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE
// LINE: 999999 tok/s\r" must not clear the screen, set the terminal's
// title, or add a line that looks like a result, on a terminal or in a
// Markdown table. Raw values stay in the trace; only what is rendered for
// people goes through here, and it all goes through Show (or Markdown and
// CSV, which are Show plus their format's own hazards). JSON keeps exact
// values for programs, and JSONWriter spells the dangerous characters in
// it as \u escapes, which decode to the same value.
package safetext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Show escapes every control character (C0, DEL, C1: ESC, BEL, CR, LF,
// tab …), the Unicode line and paragraph separators, every format
// character (the bidirectional overrides, isolates and marks, which
// reorder what a terminal shows, and the invisible ones: zero-width space
// and joiners, word joiner, byte order mark, soft hyphen, the tag
// characters that spell hidden ASCII), and bytes that are not UTF-8, as
// visible Go-style escapes (\x1b, \n, \u202e, \U000e0041). A backslash is
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
		case r == '\\' && escapeLike(s[i+1:]):
			b.WriteString(`\\`)
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
		case unsafeRune(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r) // \u takes four digits only
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

// escapeLike reports whether rest, the text after a backslash, would make
// that backslash read as one of Show's escapes: the backslash is doubled
// then, so a server sending the six characters \u202e does not look like
// one that sent U+202E. That is the case when rest starts with x, u, U, n,
// r, t or a backslash, or with anything Show escapes itself (a backslash
// before ESC would otherwise read as \\x1b).
func escapeLike(rest string) bool {
	if rest == "" {
		return false
	}
	if strings.IndexByte(`xuUnrt\`, rest[0]) >= 0 {
		return true
	}
	r, n := utf8.DecodeRuneInString(rest)
	return (r == utf8.RuneError && n == 1) || r < 0x20 || unsafeRune(r)
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && escapeLike(s[i+1:]) {
			return false
		}
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// Non-ASCII: decide rune by rune.
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || unsafeRune(r) {
				return false
			}
			i += n - 1
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
	case unicode.Is(unicode.Cf, r):
		// Format characters: the bidirectional controls (U+202A–U+202E,
		// U+2066–U+2069, U+200E/U+200F, U+061C) reorder the text around
		// them; the rest draw nothing, so "gpt-4o\u200b" looks like
		// "gpt-4o" and tag characters (U+E0020–U+E007F) carry ASCII no one
		// sees. An emoji joined by U+200D shows its joiner escaped: a
		// small price for a name that cannot pass for another.
		return true
	}
	return false
}

// CSV is Show for a spreadsheet cell, which people read in a spreadsheet
// program or a terminal: control and bidirectional characters are escaped
// as Show escapes them, and a cell that is not a number and starts with
// = + - or @ gets a leading apostrophe, so a spreadsheet shows it as text
// instead of running it as a formula (a model id "=HYPERLINK(…)" would
// otherwise become a link). Numbers, negative ones included, stay numbers.
func CSV(s string) string {
	s = Show(s)
	if s == "" || !strings.ContainsRune("=+-@", rune(s[0])) {
		return s
	}
	if decimal(s) {
		return s
	}
	return "'" + s
}

// decimal reports whether s is a plain decimal number (sign, digits, a
// point, an exponent). strconv.ParseFloat also takes "-Inf", "+NaN" and
// hex floats such as "-0x1p-2", which a spreadsheet reads as formulas
// naming something, not as numbers: those are guarded like any text.
func decimal(s string) bool {
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return false
	}
	return strings.Trim(s, "+-.0123456789eE") == "" && strings.ContainsAny(s, "0123456789")
}

// JSONWriter returns a writer for JSON text (what encoding/json writes)
// that spells every non-ASCII character Show would escape (C1 controls,
// format characters such as the bidirectional controls and zero-width
// space, line and paragraph separators) as a JSON \u escape. The decoded value is exactly what was encoded, so programs (jq)
// read the server's strings unchanged, while a person looking at the JSON
// in a terminal sees "\u202e" instead of text reordered by it.
// encoding/json already writes C0 controls as \u escapes inside strings;
// raw ASCII controls outside strings are the JSON's own whitespace and
// are left alone. A character outside ASCII can only occur inside a JSON
// string, so an escape there is always valid JSON.
//
// Each Write is rewritten on its own, without buffering: json.Encoder
// writes each value in one call. A character split across two calls
// would pass through as it came (never lost or corrupted).
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	i := firstUnsafeNonASCII(p)
	if i < 0 {
		return j.w.Write(p)
	}
	b := make([]byte, 0, len(p)+16)
	b = append(b, p[:i]...)
	for i < len(p) {
		if p[i] < utf8.RuneSelf {
			b = append(b, p[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError && unsafeRune(r) {
			// JSON's \u takes one UTF-16 unit: a character above U+FFFF
			// (a tag character) is written as its surrogate pair.
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				b = fmt.Appendf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		} else {
			b = append(b, p[i:i+n]...)
		}
		i += n
	}
	if _, err := j.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// firstUnsafeNonASCII is the offset of the first character outside ASCII
// that Show would escape, or -1: most JSON has none and is passed on as is.
func firstUnsafeNonASCII(p []byte) int {
	for i := 0; i < len(p); {
		if p[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError && unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// MaxName is the longest model id or label, in bytes, that replay takes
// and that tables, reports and exported rows show whole. A hand-made
// trace can hold longer ones: they are cut (Cut) wherever they are shown,
// so a megabyte id repeated on every row of a table cannot turn a small
// trace into gigabytes of output.
const MaxName = 512

// Cut returns s cut to at most max bytes on a character boundary, with
// what was cut said at the end ("…[1048064 more bytes]"); s as it is when
// it fits. The note is in addition to the max bytes kept.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…[" + strconv.Itoa(len(s)-n) + " more bytes]"
}
