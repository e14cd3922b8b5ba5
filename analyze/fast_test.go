package analyze

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The analysis's fast paths, each held against the plain code it replaced
// (the reference implementations below): the bucket table against
// math.Log, the count-up check against its strconv.Itoa version, the
// remembered usage objects against a fresh parse.

// TestBucketTable checks bucketOf against bucketExact on values either
// side of every bucket bound in the range analysis meets (1 ns to 10⁸ ms
// and their reciprocals), the float64 extremes and random values of every
// exponent.
func TestBucketTable(t *testing.T) {
	check := func(v float64) {
		t.Helper()
		if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return
		}
		if got, want := bucketOf(v), bucketExact(v); got != want {
			t.Fatalf("bucketOf(%v [%#x]) = %d, math.Log says %d", v, math.Float64bits(v), got, want)
		}
	}
	lo, hi := bucketExact(1e-12), bucketExact(1e12)
	for i := lo - 1; i <= hi+1; i++ {
		b := math.Exp(float64(i) * logGamma)
		for _, v := range []float64{b, math.Nextafter(b, 0), math.Nextafter(b, math.Inf(1))} {
			check(v)
			for k := 0; k < 4; k++ {
				v = math.Nextafter(v, 0)
				check(v)
			}
		}
	}
	for _, v := range []float64{math.SmallestNonzeroFloat64, 1e-310, 2.2250738585072014e-308, math.MaxFloat64, 1, 2, 0.5, 1.02, 1e-6, 4, 1000} {
		check(v)
		check(math.Nextafter(v, 0))
		check(math.Nextafter(v, math.Inf(1)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2_000_000; i++ {
		check(math.Float64frombits(rng.Uint64() &^ (1 << 63)))
	}
	for i := 0; i < 2_000_000; i++ {
		check(math.Exp(rng.Float64()*60 - 30))
	}
}

// countUpPatternItoa is countUpPattern as it was before it stopped
// allocating: the reference it must agree with.
func countUpPatternItoa(s string) int {
	want, valid, i := 1, 0, 0
	for i < len(s) {
		j := i
		for j < len(s) && j-i <= 3 && isSep(s[j]) {
			j++
		}
		if want > 1 && j == i || want == 1 && j != i {
			return valid
		}
		if j == len(s) {
			return len(s)
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
		valid, want, i = k, want+1, k
	}
	return valid
}

func countUpValidItoa(text, reference string) int {
	trimmed := strings.TrimLeft(text, " \t\r\n")
	lead := len(text) - len(trimmed)
	best := refPrefix(trimmed, reference)
	if p := countUpPatternItoa(trimmed); p > best {
		best = p
	}
	if best == 0 {
		return 0
	}
	return lead + best
}

func TestCountUpAgainstItoa(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 1200; i++ {
		long.WriteString(strconv.Itoa(i))
		long.WriteString(", ")
	}
	l := long.String()
	texts := []string{"", " ", "1", "1,", "1, 2, 3", " \n1\n2\n3\n", "1 2 3 4 5 6 7 8 9 1", "1 2 3 4 5 6 7 8 9 10 11 12 13 0",
		"0, 1", "01, 2", "1, 02", "1,,,,2", "1 2 3 4 5 6 7 8 9 10 1", "1 2 3 4 5 6 7 8 9 10 111", l, l[:len(l)-7], l[:len(l)-5] + "9"}
	refs := []string{"", "1, 2, 3, 4", " 1, 2", l}
	for _, text := range texts {
		for _, ref := range refs {
			want := countUpValidItoa(text, ref)
			if got := countUpValid(text, ref); got != want {
				t.Errorf("countUpValid(%.40q, %.20q) = %d, the Itoa version %d", text, ref, got, want)
			}
			if got := countUpValid([]byte(text), ref); got != want {
				t.Errorf("countUpValid([]byte %.40q, %.20q) = %d, the Itoa version %d", text, ref, got, want)
			}
		}
	}
}

// TestServerObjectsRemembered: a remembered usage/timings pair reads as a
// fresh parse does, including objects that do not parse, and the memory
// stays within its bound.
func TestServerObjectsRemembered(t *testing.T) {
	pairs := [][2]string{
		{"", ""},
		{`{"completion_tokens":256,"prompt_tokens":800}`, ""},
		{`{"completion_tokens":256,"prompt_tokens":800,"prompt_tokens_details":{"cached_tokens":512}}`, ""},
		{"", `{"predicted_n":100,"predicted_ms":2000,"prompt_n":50,"prompt_ms":100,"cache_n":7}`},
		{`{"eval_count":10,"eval_duration":1e9,"prompt_eval_count":5,"prompt_eval_duration":5e8}`, `null`},
		{`{"completion_tokens":"x"}`, `{"predicted_n":1}`},
		{`not json`, `{`},
		{`{"output_tokens":9,"input_tokens":3,"cache_read_input_tokens":4}`, ""},
	}
	var s serverObjects
	for round := 0; round < 3; round++ {
		for _, p := range pairs {
			got := s.read(p[0], p[1])
			c, pr := usageCounts(p[0], p[1])
			want := serverObject{completion: c, prompt: pr, timers: readServerTimers(p[0], p[1])}
			if got != want {
				t.Errorf("round %d, %q %q: remembered %+v, parsed %+v", round, p[0], p[1], got, want)
			}
		}
	}
	for i := 0; i < 3*maxServerObjects; i++ {
		s.read(`{"completion_tokens":`+strconv.Itoa(i)+`}`, "")
		if len(s.m) > maxServerObjects {
			t.Fatalf("%d objects remembered, bound %d", len(s.m), maxServerObjects)
		}
	}
	if got := s.read(`{"completion_tokens":5}`, ""); got.completion != 5 {
		t.Errorf("after refills: completion %d, want 5", got.completion)
	}
	// Every pair distinct (llama.cpp's timings): after serverObjectsGiveUp
	// misses with no hit it keeps nothing more, and still answers right.
	var v serverObjects
	for i := 0; i < 2*serverObjectsGiveUp; i++ {
		tm := `{"predicted_n":` + strconv.Itoa(i) + `,"predicted_ms":12.5}`
		if got := v.read("", tm); got.completion != i {
			t.Fatalf("pair %d: completion %d", i, got.completion)
		}
	}
	if len(v.m) != 0 {
		t.Errorf("%d pairs kept after %d misses and no hit", len(v.m), v.misses)
	}
	// Large objects are not kept, and the bytes kept stay bounded.
	var b serverObjects
	big := `{"completion_tokens":7,"x":"` + strings.Repeat("a", maxCachedObject) + `"}`
	if got := b.read(big, ""); got.completion != 7 || len(b.m) != 0 {
		t.Errorf("a %d-byte object: completion %d, %d kept", len(big), got.completion, len(b.m))
	}
	pad := strings.Repeat("b", maxCachedObject-100)
	for i := 0; i < 2*maxServerObjectBytes/len(pad); i++ {
		u := `{"completion_tokens":1,"x":"` + pad + strconv.Itoa(i) + `"}`
		b.read(u, "")
		b.read(u, "") // a hit, so it keeps remembering
		if b.bytes > maxServerObjectBytes {
			t.Fatalf("%d bytes kept, bound %d", b.bytes, maxServerObjectBytes)
		}
	}
}

// exactUPTables is exactUP as it was before it reused two tables: the
// reference it must agree with bit for bit.
func exactUPTables(u float64, n1, n2 int) float64 {
	maxU := n1 * n2
	prev := make([][]float64, n2+1)
	for j := range prev {
		prev[j] = make([]float64, maxU+1)
		prev[j][0] = 1
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		cur[0] = make([]float64, maxU+1)
		cur[0][0] = 1
		for j := 1; j <= n2; j++ {
			cur[j] = make([]float64, maxU+1)
			for v := 0; v <= i*j; v++ {
				c := cur[j-1][v]
				if v-j >= 0 {
					c += prev[j][v-j]
				}
				cur[j][v] = c
			}
		}
		prev = cur
	}
	return twoSidedP(prev[n2], u)
}

func TestExactUPAgainstTables(t *testing.T) {
	for _, n := range [][2]int{{1, 1}, {1, 5}, {3, 3}, {5, 2}, {7, 11}, {12, 32}, {32, 32}} {
		for _, u := range []float64{0, 1, 2.5, float64(n[0] * n[1] / 3), float64(n[0]*n[1]) / 2, float64(n[0] * n[1])} {
			if got, want := exactUP(u, n[0], n[1]), exactUPTables(u, n[0], n[1]); got != want {
				t.Errorf("exactUP(%v, %d, %d) = %v, the per-row version %v", u, n[0], n[1], got, want)
			}
		}
	}
}

// TestShortCounts: the table of short texts answers what the tokenizer
// says, past collisions and overwrites (more texts than slots).
func TestShortCounts(t *testing.T) {
	c := newCounter("o200k_base", "", "", "")
	if c.tok == nil {
		t.Fatalf("o200k_base did not load: %s", c.fallback)
	}
	var texts []string
	for i := 0; i < 3<<shortBits; i++ {
		texts = append(texts, strconv.Itoa(i), " "+strconv.Itoa(i), strconv.Itoa(i)+",", "\x00"+strconv.Itoa(i%97))
	}
	texts = append(texts, "a", "ab", "abcdefg", "abcdefgh", "日本", "\x00", "\x00\x00")
	for round := 0; round < 2; round++ {
		for _, s := range texts {
			if got, want := c.count(s), c.tok.Count(s); got != want {
				t.Fatalf("count(%q) = %d, the tokenizer says %d", s, got, want)
			}
		}
	}
}
