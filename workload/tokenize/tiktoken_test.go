package tokenize

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestTiktokenDigestStable pins the digests workloads record: a change here
// means every workload built earlier no longer matches its tokenizer.
func TestTiktokenDigestStable(t *testing.T) {
	want := map[string]string{
		"o200k_base":  "sha256:d31d0af3a505dfca4e0d057dd87800dfc649b32beb375e13b25d379f7805107e",
		"cl100k_base": "sha256:e937608629e29a1549d03fa72e571277ea268c4983d7e4231633e07afa607b12",
	}
	for name, d := range want {
		if got := loadT(t, name).Digest(); got != d {
			t.Errorf("%s digest = %s, want %s", name, got, d)
		}
	}
}

// TestTiktokenGolden compares with ids from js-tiktoken 1.0.21 (a JS port
// of OpenAI's tiktoken whose regexes backtrack like the original's).
func TestTiktokenGolden(t *testing.T) {
	for _, name := range TiktokenNames {
		tok := loadT(t, name)
		golden := "tiktoken/" + name
		cases := append(readGolden(t, golden), readGoldenFile(t, goldenPath(golden, "random"))...)
		for i, c := range cases {
			if got := tok.Encode(c.Text); !slices.Equal(got, c.IDs) {
				t.Errorf("%s case %d %.50q:\n got %v\nwant %v", name, i, c.Text, got, c.IDs)
			}
		}
	}
}

// TestTiktokenAgreesWithLibrary: on printable text, where tiktoken-go's
// regex engine splits correctly, our encoder must give its ids exactly
// (line breaks and control characters are where it goes wrong; the
// js-tiktoken golden file covers those). Round trip and Count everywhere.
func TestTiktokenAgreesWithLibrary(t *testing.T) {
	for _, name := range TiktokenNames {
		tok := loadT(t, name).(*tiktoken)
		for _, c := range readGolden(t, "qwen3") {
			if got := tok.Decode(tok.Encode(c.Text)); got != c.Text {
				t.Errorf("%s: round trip of %.40q gave %.40q", name, c.Text, got)
			}
			if n, ids := tok.Count(c.Text), tok.Encode(c.Text); n != len(ids) {
				t.Errorf("%s: Count %d, len(Encode) %d", name, n, len(ids))
			}
			if strings.ContainsFunc(c.Text, func(r rune) bool { return !unicode.IsPrint(r) }) {
				continue
			}
			lib, _, err := libraryCodec(t, name).Encode(c.Text)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int, len(lib))
			for i, id := range lib {
				want[i] = int(id)
			}
			if got := tok.Encode(c.Text); !slices.Equal(got, want) {
				t.Errorf("%s %.50q:\n got %v\nwant %v", name, c.Text, got, want)
			}
		}
		// The library's engine splits "\n \n" in two; the regex keeps it
		// whole, and it is one token in both encodings.
		if got := tok.Encode("a\n \nb"); len(got) != 3 || tok.Decode(got[1:2]) != "\n \n" {
			t.Errorf("%s: Encode(a\\n \\nb) = %v, want [a, \"\\n \\n\", b]", name, got)
		}
		long := strings.Repeat(" ", 5000) + "x" + strings.Repeat("ab", 3000)
		if got := tok.Decode(tok.Encode(long)); got != long {
			t.Errorf("%s: long round trip failed", name)
		}
	}
}
