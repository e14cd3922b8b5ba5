package tokenize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
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

// FuzzTiktokenEncode checks our o200k/cl100k encoder against tiktoken-go on
// printable text (where that library's regex engine is right), and round
// trip and Count everywhere.
func FuzzTiktokenEncode(f *testing.F) {
	for _, s := range []string{"Hello, world!", "it's 12345 'LL  x", "a\n \nb", "ÉCOLE école ǅ ʰ", "x/y//z\r\n"} {
		f.Add(s)
	}
	toks := []*tiktoken{loadT(f, "o200k_base").(*tiktoken), loadT(f, "cl100k_base").(*tiktoken)}
	libs := map[string]tokenizer.Codec{"o200k_base": libraryCodec(f, "o200k_base"), "cl100k_base": libraryCodec(f, "cl100k_base")}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids := tok.Encode(s)
			if n := tok.Count(s); n != len(ids) {
				t.Fatalf("%s: Count %d != len(Encode) %d", tok.name, n, len(ids))
			}
			if !utf8.ValidString(s) {
				continue
			}
			if got := tok.Decode(ids); got != s {
				t.Fatalf("%s: round trip %q -> %q", tok.name, s, got)
			}
			if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
				// Line breaks and control characters are where
				// tiktoken-go's generated regex engine goes wrong ("\x7f"
				// gives no token at all); FuzzFastSplit covers them
				// against regexp2's interpreter.
				continue
			}
			lib, _, _ := libs[tok.name].Encode(s)
			if len(lib) != len(ids) {
				t.Fatalf("%s: %q: ours %v, tiktoken-go %v", tok.name, s, ids, lib)
			}
			for i := range lib {
				if int(lib[i]) != ids[i] {
					t.Fatalf("%s: %q: ours %v, tiktoken-go %v", tok.name, s, ids, lib)
				}
			}
		}
	})
}
