package tokenize

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchProse returns varied English prose of about n tokens under tok:
// sentences of common words in a seeded order, so a benchmark sees the
// mix of repeated and fresh pieces a real prompt has.
func benchProse(tb testing.TB, tok Tokenizer, n int) string {
	tb.Helper()
	words := strings.Fields(`the water house people year time day way man thing woman life child world school
		state family student group country problem hand part place case week company system program question work
		government number night point home room mother area money story fact month lot right study book eye job word
		business issue side kind head service friend father power hour game line end member law car city community name
		president team minute idea kid body information back parent face others level office door health person art war
		history party result change morning reason research girl guy moment air teacher force education river boat town`)
	verbs := strings.Fields(`said carried came walked told believed asked found lived gave made took saw knew thought looked wanted used worked called tried`)
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n*6 {
		b.WriteString("The ")
		for k := 0; k < 12; k++ {
			b.WriteString(words[r.IntN(len(words))])
			if k == 5 {
				b.WriteString(" " + verbs[r.IntN(len(verbs))])
			}
			if r.IntN(9) == 0 {
				b.WriteString(",")
			}
			b.WriteString(" ")
		}
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteString(".\n\n")
		} else {
			b.WriteString(". ")
		}
	}
	text := b.String()
	// Trim to about n tokens.
	ids := tok.Encode(text)
	if len(ids) > n {
		text = tok.Decode(ids[:n])
	}
	return text
}

// benchCount counts the tokens of 32,000 tokens of prose, reporting tok/s.
func benchCount(b *testing.B, spec string) {
	tok := loadT(b, spec)
	text := benchProse(b, tok, 32000)
	n := tok.Count(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if tok.Count(text) != n {
			b.Fatal("count changed")
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkCountQwen3_32k(b *testing.B)      { benchCount(b, hfPath("qwen3")) }
func BenchmarkCountDeepSeekV3_32k(b *testing.B) { benchCount(b, hfPath("deepseek_v3")) }
func BenchmarkCountO200k_32k(b *testing.B)      { benchCount(b, "o200k_base") }
func BenchmarkCountCl100k_32k(b *testing.B)     { benchCount(b, "cl100k_base") }

// BenchmarkLoadQwen3 reads, decompresses and parses the 11 MB Qwen3
// tokenizer.json (bypassing Load's cache).
func BenchmarkLoadQwen3(b *testing.B) {
	for b.Loop() {
		if _, err := loadHF(hfPath("qwen3")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestO200k is the first-use cost of a tiktoken encoding:
// opening its embedded vocabulary in place (checking the header and the
// offsets) on the first Digest, Encode or Count.
func BenchmarkDigestO200k(b *testing.B) {
	for b.Loop() {
		t, err := newTiktoken("o200k_base")
		if err != nil {
			b.Fatal(err)
		}
		_ = t.Digest()
	}
}
