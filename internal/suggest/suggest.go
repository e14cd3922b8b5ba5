// Package suggest finds the names a mistyped word was probably meant to
// be, for the "did you mean" of an error: a misspelt flag, grouping key or
// command. It knows nothing of what the names are.
package suggest

import (
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Nearest returns the names of candidates close to word, nearest first
// (ties in the candidates' order), at most limitN of them (0: no limit).
// Close means an edit distance of at most a third of the longer word (at
// least 1, at most 3), compared without case and with "_" and "-" alike
// (people type input_tokens for --input-tokens), or one of the two being a
// prefix of the other of at least 3 letters (--conc for --concurrency).
// An exact match is not a suggestion.
func Nearest(word string, candidates []string, limitN int) []string {
	w := fold(word)
	if w == "" {
		return nil
	}
	type hit struct {
		name string
		d    int
		i    int
	}
	var hits []hit
	seen := map[string]bool{}
	for i, c := range candidates {
		fc := fold(c)
		if c == word || seen[c] {
			continue
		}
		d := levenshtein.ComputeDistance(w, fc)
		limit := max(min((max(len(w), len(fc))+1)/3, 3), 1)
		prefix := len(w) >= 3 && len(fc) >= 3 && (strings.HasPrefix(fc, w) || strings.HasPrefix(w, fc))
		if d <= limit || prefix {
			if prefix && d > limit {
				d = limit + 1 // after the misspellings, before nothing
			}
			seen[c] = true
			hits = append(hits, hit{c, d, i})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].d < hits[b].d })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		if limitN > 0 && len(out) == limitN {
			break
		}
		out = append(out, h.name)
	}
	return out
}

// Phrase is " (did you mean X?)", " (did you mean X or Y?)" for the
// nearest of candidates, or "" when none is near.
func Phrase(word string, candidates []string) string {
	n := Nearest(word, candidates, 2)
	switch len(n) {
	case 0:
		return ""
	case 1:
		return " (did you mean " + n[0] + "?)"
	}
	return " (did you mean " + n[0] + " or " + n[1] + "?)"
}

func fold(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}
