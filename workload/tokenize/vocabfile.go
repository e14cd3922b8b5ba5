package tokenize

import (
	_ "embed"
	"fmt"
)

// The tiktoken vocabularies, one file per encoding (format 2, rankindex.go):
// the token bytes of every id as github.com/tiktoken-go/tokenizer decodes
// them, written by TestEmbeddedVocabulariesMatchTheLibrary (-update) and
// checked against the library by it on every test run. They are embedded
// uncompressed, as strings, so that the binary's read-only data is the
// table itself. Getting the same table from the library took ~140 ms of
// CPU (its generated map literal of every token, then a Decode call per
// id), and building it from a compressed list of tokens ~85 ms.
var (
	//go:embed vocab/o200k_base.vocab
	o200kVocab string
	//go:embed vocab/cl100k_base.vocab
	cl100kVocab string
)

func vocabPath(name string) string { return "vocab/" + name + ".vocab" }

// encodings are the tiktoken encodings Load accepts by name
// (TiktokenNames): the pre-tokenizer pattern and the embedded vocabulary
// of each.
var encodings = map[string]struct{ pattern, vocab string }{
	"o200k_base":  {o200kPattern, o200kVocab},
	"cl100k_base": {llama3Pattern, cl100kVocab},
}

// readVocab opens the embedded vocabulary of the named encoding.
func readVocab(name string) (*rankIndex, error) {
	enc, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("no embedded vocabulary %q", name)
	}
	x, err := openVocab(enc.vocab)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", name, err)
	}
	return x, nil
}
