package tokenize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

var fastPatterns = []string{gpt2Pattern, qwenPattern, llama3Pattern, o200kPattern}

var refRegexps sync.Map // pattern -> *regexp2.Regexp

func compiledRef(pattern string) *regexp2.Regexp {
	if re, ok := refRegexps.Load(pattern); ok {
		return re.(*regexp2.Regexp)
	}
	re := regexp2.MustCompile("(?:"+pattern+")", regexp2.None)
	refRegexps.Store(pattern, re)
	return re
}

// regexpSpans are the matches of pattern by regexp2, the reference.
func regexpSpans(t testing.TB, pattern, s string) [][2]int {
	// Wrapped so as not to pick up a registered generated engine (see
	// preStep.compile).
	re := compiledRef(pattern)
	idx, err := re.FindAllStringIndex(s, -1)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]int
	for _, m := range idx {
		if m[1] > m[0] {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

func fastSpans(pattern, s string) [][2]int {
	var out [][2]int
	fastSplitter(pattern)(s, func(a, b int) { out = append(out, [2]int{a, b}) })
	return out
}

func checkFast(t *testing.T, s string) {
	t.Helper()
	for _, p := range fastPatterns {
		want, got := regexpSpans(t, p, s), fastSpans(p, s)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %.30q… on %q:\n fast   %s\n regexp %s", p, s, show(s, got), show(s, want))
		}
	}
}

func show(s string, spans [][2]int) string {
	var b strings.Builder
	for _, sp := range spans {
		fmt.Fprintf(&b, "%q ", s[sp[0]:sp[1]])
	}
	return b.String()
}

func TestFastSplitMatchesRegexp(t *testing.T) {
	for _, p := range fastPatterns {
		if fastSplitter(p) == nil {
			t.Fatalf("no fast splitter for %q", p)
		}
	}
	for _, c := range readGolden(t, "qwen3") {
		checkFast(t, c.Text)
	}
	// Random strings over an alphabet of the characters the patterns
	// treat specially.
	alphabet := []string{"a", "Z", "é", "你", "1", "٣", "½", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000", "'", "s", "t", "re", "LL", "ve", "D", "m", "!", ",", ".", "-", "😀", "\u0301", "_", "A", "É", "ǅ", "ʰ", "ab", "AB", "/", "'S", "中"}
	r := rand.New(rand.NewPCG(7, 7))
	for range 3000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkFast(t, b.String())
	}
}

// FuzzFastSplit checks the hand-written matchers against regexp2 on
// arbitrary valid UTF-8.
func FuzzFastSplit(f *testing.F) {
	for _, s := range []string{"Hello, world!", "it's 12345 'LL  \n\n x", "a\u00a0 b\r\n\t!", "你好 😀 ½"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsRune(s, 0xFFFD) && strings.ToValidUTF8(s, "") == s {
			checkFast(t, s)
		}
	})
}
