package analyze

import (
	"strings"
	"testing"
)

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft=2s,tpot=50ms", "e2e=10s", "ttft=150", "tpot=0.5ms,ttft=1m", "ttft", "x=1s", "ttft=-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		if slo.TTFT < 0 || slo.TPOT < 0 || slo.E2E < 0 || slo == (SLO{}) {
			t.Fatalf("%q parsed to %+v", s, slo)
		}
	})
}

// FuzzCountUp checks the count-up reader never reads past the text and
// that a valid prefix stays valid when the text grows.
func FuzzCountUp(f *testing.F) {
	for _, s := range []string{"1, 2, 3", " 1\n2\n3", "1 2 3 4 5 6 7 8 9 1", "<think>", "0, 1", "1,,,,2", ""} {
		f.Add(s, "1, 2, 3, 4")
	}
	f.Fuzz(func(t *testing.T, text, ref string) {
		n := countUpValid(text, ref)
		if n < 0 || n > len(text) {
			t.Fatalf("countUpValid(%q, %q) = %d, outside the text", text, ref, n)
		}
		if n > 0 && countUpValid(text[:n], ref) != n && !strings.HasPrefix(ref, strings.TrimLeft(text[:n], " \t\r\n")) {
			// A valid prefix, cut where it ended, is still entirely valid.
			t.Fatalf("prefix %q of %q: %d, want %d", text[:n], text, countUpValid(text[:n], ref), n)
		}
	})
}
