package tokenize

import (
	"bytes"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// The tiktoken vocabularies, one file per encoding: the token bytes of
// every id as github.com/tiktoken-go/tokenizer decodes them, written by
// TestEmbeddedVocabulariesMatchTheLibrary (-update) and checked against
// the library by it on every test run. Reading them takes a few
// milliseconds; getting the same table from the library took ~140 ms of
// CPU (its generated map literal of every token, then a Decode call per
// id), most of a short command's time: every analyze, check and workload
// build paid it.
//
//go:embed vocab/*.vocab.zst
var vocabFiles embed.FS

// vocabMagic starts a vocabulary file (inside the zstd frame); then come
// the tokens of ids 0, 1, … in order, each a uvarint length and that many
// bytes (length 0: no token has that id).
const vocabMagic = "llmreplay vocabulary 1\n"

// maxVocabFile bounds what a vocabulary file may expand to.
const maxVocabFile = 16 << 20

func vocabPath(name string) string { return "vocab/" + name + ".vocab.zst" }

// readVocab returns the token bytes of every id of the named encoding,
// substrings of one string.
func readVocab(name string) ([]string, error) {
	raw, err := vocabFiles.ReadFile(vocabPath(name))
	if err != nil {
		return nil, err
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxVocabFile))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := d.DecodeAll(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", name, err)
	}
	return parseVocabFile(b)
}

func parseVocabFile(b []byte) ([]string, error) {
	if !bytes.HasPrefix(b, []byte(vocabMagic)) {
		return nil, errors.New("not a vocabulary file")
	}
	b = b[len(vocabMagic):]
	all := string(b) // one copy; every token is a substring of it
	// Every token takes at least its length byte: an upper bound that
	// spares the slice its growing copies (most of the read's time).
	ids := make([]string, 0, min(len(b), 1<<18))
	for off := 0; off < len(all); {
		n, w := binary.Uvarint(b[off:])
		if w <= 0 || n > uint64(len(all)-off-w) {
			return nil, fmt.Errorf("vocabulary file: bad length at byte %d", off+len(vocabMagic))
		}
		off += w
		ids = append(ids, all[off:off+int(n)])
		off += int(n)
	}
	return ids, nil
}

// vocabFile is the uncompressed content of a vocabulary file for ids.
func vocabFile(ids []string) []byte {
	b := []byte(vocabMagic)
	for _, s := range ids {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}
