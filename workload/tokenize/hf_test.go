package tokenize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hfTestdata are the tokenizer.json files committed under testdata, each
// with golden ids from @lenml/tokenizers (a JS port of HF tokenizers).
var hfTestdata = []string{"qwen3", "deepseek_v3"}

func hfPath(name string) string { return filepath.Join("testdata", name, "tokenizer.json.zst") }

type goldenCase struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// readGolden reads the golden ids of the main corpus for a tokenizer
// ("qwen3", or "tiktoken/o200k_base").
func readGolden(t testing.TB, name string) []goldenCase {
	t.Helper()
	return readGoldenFile(t, goldenPath(name, ""))
}

// goldenPath is the golden file of a tokenizer for a corpus: "" for
// corpus.json, "random" for random.json.
func goldenPath(name, corpus string) string {
	file := "golden.json"
	if corpus != "" {
		file = corpus + ".golden.json"
	}
	if dir, enc, ok := strings.Cut(name, "/"); ok {
		return filepath.Join("testdata", dir, enc+"."+file)
	}
	return filepath.Join("testdata", name, file)
}

func readGoldenFile(t testing.TB, path string) []goldenCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cs []goldenCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func loadT(t testing.TB, spec string) Tokenizer {
	t.Helper()
	tok, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestHFGolden(t *testing.T) {
	for _, name := range hfTestdata {
		t.Run(name, func(t *testing.T) {
			tok := loadT(t, hfPath(name))
			cases := append(readGolden(t, name), readGoldenFile(t, goldenPath(name, "random"))...)
			for i, c := range cases {
				got := tok.Encode(c.Text)
				if !slices.Equal(got, c.IDs) {
					t.Errorf("case %d %.60q:\n got %v\nwant %v", i, c.Text, got, c.IDs)
					continue
				}
				if n := tok.Count(c.Text); n != len(c.IDs) {
					t.Errorf("case %d: Count = %d, want %d", i, n, len(c.IDs))
				}
			}
		})
	}
}
