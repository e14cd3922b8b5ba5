package analyze

import (
	"strconv"
	"strings"
)

// countUpValid returns how many leading bytes of text are a correct answer
// to the count-up task: the longer of (a) the common prefix with the
// workload's reference answer and (b) a run of 1, 2, 3, … separated by
// short punctuation or spaces, whatever the separator the model chose. A
// number cut off at the end of the text by max_tokens counts when it is a
// prefix of the number due next. Leading white space is allowed.
func countUpValid(text, reference string) int {
	trimmed := strings.TrimLeft(text, " \t\r\n")
	lead := len(text) - len(trimmed)
	best := 0
	if reference != "" {
		ref := strings.TrimLeft(reference, " \t\r\n")
		n := 0
		for n < len(trimmed) && n < len(ref) && trimmed[n] == ref[n] {
			n++
		}
		best = n
	}
	if p := countUpPattern(trimmed); p > best {
		best = p
	}
	if best == 0 {
		return 0
	}
	return lead + best
}

func countUpPattern(s string) int {
	want := 1
	valid := 0
	i := 0
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
		ws := strconv.Itoa(want)
		got := s[j:k]
		if got != ws {
			if k == len(s) && strings.HasPrefix(ws, got) {
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

func isSep(b byte) bool {
	switch b {
	case ' ', ',', '\n', '\t', '\r', ';', '.', '-':
		return true
	}
	return false
}
