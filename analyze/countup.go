package analyze

import (
	"strconv"
	"strings"
)

// countUpInput is what the count-up check reads: a record's received text,
// gathered into a reused byte buffer by the analysis (no string copy per
// record) or given as a string by tests and callers.
type countUpInput interface{ ~string | ~[]byte }

// countUpValid returns how many leading bytes of text are a correct answer
// to the count-up task: the longer of (a) the common prefix with the
// workload's reference answer and (b) a run of 1, 2, 3, … separated by
// short punctuation or spaces, whatever the separator the model chose. A
// number cut off at the end of the text by max_tokens counts when it is a
// prefix of the number due next. Leading white space is allowed.
func countUpValid[T countUpInput](text T, reference string) int {
	lead := 0
	for lead < len(text) && isSpace(text[lead]) {
		lead++
	}
	trimmed := text[lead:]
	best := refPrefix(trimmed, reference)
	// The pattern never reads more than the text: where the reference
	// already matched all of it (a right answer), it cannot do better.
	if best < len(trimmed) {
		if p := countUpPattern(trimmed); p > best {
			best = p
		}
	}
	if best == 0 {
		return 0
	}
	return lead + best
}

// refPrefix is how many leading bytes of the (trimmed) answer agree with
// the workload's reference answer, its leading white space dropped.
func refPrefix[T countUpInput](trimmed T, reference string) int {
	ref := strings.TrimLeft(reference, " \t\r\n")
	n := 0
	for n < len(trimmed) && n < len(ref) && trimmed[n] == ref[n] {
		n++
	}
	return n
}

// isSpace is the white space countUpValid allows before the answer.
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func countUpPattern[T countUpInput](s T) int {
	want := 1
	valid := 0
	i := 0
	// The number due next is written into a stack buffer: one string per
	// number (strconv.Itoa) was an allocation per token of every count-up
	// response analysed.
	var wbuf [20]byte
	for i < len(s) {
		// separator: at most 3 bytes of space and punctuation, none before 1
		j := i
		for j < len(s) && j-i <= 3 && isSep(s[j]) {
			j++
		}
		if want > 1 && j == i {
			return valid
		}
		if want == 1 && j != i {
			return valid
		}
		if j == len(s) {
			return len(s) // trailing separator after a correct number
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return valid
		}
		ws := strconv.AppendInt(wbuf[:0], int64(want), 10)
		got := s[j:k]
		if !digitsPrefix(got, ws) || len(got) != len(ws) {
			if k == len(s) && digitsPrefix(got, ws) {
				return len(s)
			}
			return valid
		}
		valid = k
		want++
		i = k
	}
	return valid
}

// digitsPrefix reports whether got is a prefix of ws.
func digitsPrefix[T countUpInput](got T, ws []byte) bool {
	if len(got) > len(ws) {
		return false
	}
	for i := 0; i < len(got); i++ {
		if got[i] != ws[i] {
			return false
		}
	}
	return true
}

func isSep(b byte) bool {
	switch b {
	case ' ', ',', '\n', '\t', '\r', ';', '.', '-':
		return true
	}
	return false
}
