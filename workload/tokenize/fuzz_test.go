package tokenize

import (
	"testing"
	"unicode/utf8"
)

// FuzzHFEncode checks, on Qwen3, that encoding never panics, that Count
// agrees with Encode, and that valid UTF-8 round-trips (after the NFC
// normalization the tokenizer applies).
func FuzzHFEncode(f *testing.F) {
	for _, c := range readGolden(f, "qwen3") {
		if len(c.Text) < 200 {
			f.Add(c.Text)
		}
	}
	tok := loadT(f, hfPath("qwen3")).(*hfTokenizer)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if n := tok.Count(s); n != len(ids) {
			t.Fatalf("Count %d != len(Encode) %d", n, len(ids))
		}
		if !utf8.ValidString(s) {
			return
		}
		want := s
		if tok.normalize != nil {
			want = tok.normalize(s)
		}
		if got := tok.Decode(ids); got != want {
			t.Fatalf("round trip: %q -> %v -> %q", s, ids, got)
		}
	})
}

// FuzzLoadHF feeds arbitrary bytes as a tokenizer.json: parsing may fail
// but must not panic, and a tokenizer that parses must encode without
// panicking.
func FuzzLoadHF(f *testing.F) {
	f.Add(mini{merges: theMerges}.json())
	f.Add(mini{merges: theMerges, arrayMerges: true, ignoreMerges: true}.json())
	f.Add(mini{pre: `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":"-"},"behavior":"MergedWithNext","invert":true},{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":true,"use_regex":false}]}`,
		normalizer: `{"type":"NFKC"}`, added: []hfAddedToken{{ID: 300, Content: "<x>", LStrip: true, RStrip: true, Normalized: true}}}.json())
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"a":0}}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parseHF(data)
		if err != nil {
			return
		}
		for _, s := range []string{"", "the abc-123 <x> x", "\xff\n  \t"} {
			if n := tok.Count(s); n != len(tok.Encode(s)) {
				t.Fatalf("Count %d != len(Encode)", n)
			}
		}
	})
}
