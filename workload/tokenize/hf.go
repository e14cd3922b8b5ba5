package tokenize

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/unicode/norm"
)

// supportedKinds ends every "wrong kind of tokenizer" error, so the user
// learns what would work instead.
const supportedKinds = "supported: a byte-level BPE tokenizer.json (Qwen, Llama 3, DeepSeek, GPT-2 style) or the names o200k_base, cl100k_base"

// maxTokenizerJSON bounds how much we read from a (possibly compressed)
// tokenizer.json, so a zstd bomb cannot exhaust memory. Real ones are
// 2-30 MB.
const maxTokenizerJSON = 256 << 20

// hfTokenizer is a HuggingFace byte-level BPE tokenizer.json, encoded the
// way the Rust tokenizers library does: added tokens are split out first,
// the rest is normalized, pre-tokenized into pieces, each piece mapped to
// bytes and merged by rank.
type hfTokenizer struct {
	name   string
	digest string

	normalize func(string) string
	steps     []preStep // pre-tokenizer steps that run on raw text, in order
	prefix    bool      // ByteLevel add_prefix_space

	added *addedMatcher

	// byteID is the id of the one-byte token for each byte (-1 if the
	// vocabulary lacks it; HF then drops the byte, so do we).
	byteID [256]int32
	// merges maps a pair of ids to the merge's rank and the merged id.
	merges map[uint64]merge
	// ignoreMerges: a piece that is itself a vocabulary entry is emitted
	// whole without merging (Llama 3 sets this).
	ignoreMerges bool
	whole        map[string]int // raw-byte piece -> id, only with ignoreMerges

	idBytes [][]byte // id -> raw bytes, for Decode

	cache *pieceCache
}

var _ Tokenizer = (*hfTokenizer)(nil)

type merge struct {
	rank int32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (t *hfTokenizer) Name() string   { return t.name }
func (t *hfTokenizer) Digest() string { return t.digest }

// Encode returns the ids of text. Invalid UTF-8 is first replaced by
// U+FFFD per maximal bad subsequence, as a server decoding the request
// body would do.
func (t *hfTokenizer) Encode(text string) []int { return encodeAll(t.each, text) }

// Count is len(Encode(text)) without building the id slice.
func (t *hfTokenizer) Count(text string) int { return countAll(t.each, text) }

// Decode concatenates the bytes of ids. Unknown ids are skipped; bytes that
// do not form valid UTF-8 (a prefix of a multi-byte character) are kept as
// they are, so decoding a whole Encode output gives the text back.
func (t *hfTokenizer) Decode(ids []int) string {
	return decode(len(t.idBytes), func(id int) []byte { return t.idBytes[id] }, ids)
}

// each feeds the ids of text (valid UTF-8), piece by piece, to emit. emit
// must not keep the slice.
func (t *hfTokenizer) each(text string, emit func([]int32)) {
	var scratch []int32
	bpe := t.bpe
	t.added.split(text, t.normalize, func(seg string, id int) {
		if id >= 0 {
			one := [1]int32{int32(id)}
			emit(one[:])
			return
		}
		t.pretokenize(seg, func(piece string) {
			emit(t.cache.ids(piece, &scratch, bpe))
		})
	})
}

// pretokenize runs the pre-tokenizer steps over seg and calls fn with each
// final piece (raw bytes, before the byte-level alphabet mapping, which the
// BPE below does implicitly by starting from byteID).
func (t *hfTokenizer) pretokenize(seg string, fn func(string)) {
	var run func(s string, i int)
	run = func(s string, i int) {
		if i == len(t.steps) {
			fn(s)
			return
		}
		t.steps[i].split(s, func(p string) { run(p, i+1) })
	}
	if t.prefix {
		// HF's ByteLevel(add_prefix_space) prepends a space to each split
		// that reaches it. The raw-text steps before it decide the splits,
		// so the space is added here, at the ByteLevel step.
		last := len(t.steps)
		if last > 0 && t.steps[last-1].byteLevel {
			last--
		}
		var runPrefix func(s string, i int)
		runPrefix = func(s string, i int) {
			if i == last {
				if !strings.HasPrefix(s, " ") {
					s = " " + s
				}
				run(s, i)
				return
			}
			t.steps[i].split(s, func(p string) { runPrefix(p, i+1) })
		}
		runPrefix(seg, 0)
		return
	}
	run(seg, 0)
}

// bpe merges piece (raw bytes) into token ids, appending to out. It always
// merges the leftmost occurrence of the lowest-ranked pair, which gives the
// same result as HF's priority queue (a rank belongs to one pair, and the
// queue breaks ties by position).
func (t *hfTokenizer) bpe(piece string, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.whole[piece]; ok {
			return append(out, int32(id))
		}
	}
	start := len(out)
	for i := 0; i < len(piece); i++ {
		if id := t.byteID[piece[i]]; id >= 0 {
			out = append(out, id)
		}
	}
	sym := out[start:]
	if len(sym) < 2 {
		return out
	}
	if len(sym) > 64 {
		return append(out[:start], t.bpeLong(sym)...)
	}
	return out[:start+len(t.bpeScan(sym))]
}

// bpeScan merges sym in place, lowest rank leftmost, rescanning for the
// best pair after each merge, until no pair merges; it returns the merged
// prefix of sym. Short pieces take it; bpeLong must agree with it.
func (t *hfTokenizer) bpeScan(sym []int32) []int32 {
	for len(sym) > 1 {
		best, at := merge{rank: -1}, -1
		for i := 0; i+1 < len(sym); i++ {
			if m, ok := t.merges[pairKey(sym[i], sym[i+1])]; ok && (at < 0 || m.rank < best.rank) {
				best, at = m, i
			}
		}
		if at < 0 {
			break
		}
		sym[at] = best.id
		sym = append(sym[:at+1], sym[at+2:]...)
	}
	return sym
}

// bpeLong is bpe for long pieces (runs of spaces, long numbers without a
// digit split, base64 blobs), where rescanning for the best pair after each
// merge would be quadratic: a heap of candidate merges ordered by (rank,
// position), with stale entries skipped when popped, as tokenizers does.
func (t *hfTokenizer) bpeLong(sym []int32) []int32 {
	n := len(sym)
	next, prev := links(n)
	mergeLong(next, prev, func(i, j int32) (cand, bool) {
		m, ok := t.merges[pairKey(sym[i], sym[j])]
		return cand{rank: m.rank, pos: i, left: sym[i], right: sym[j]}, ok
	}, func(c cand, j int32) bool {
		return sym[c.pos] == c.left && sym[j] == c.right
	}, func(c cand) {
		sym[c.pos] = t.merges[pairKey(c.left, c.right)].id
	})
	out := make([]int32, 0, n)
	for i := int32(0); i < int32(n); i = next[i] {
		out = append(out, sym[i])
	}
	return out
}

// toValidUTF8 replaces each maximal invalid subsequence with U+FFFD, the
// way Python's and Rust's lossy decoders do.
func toValidUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			n = maximalSubpart(s)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// maximalSubpart is the length of the invalid sequence at the start of s
// that Unicode's "maximal subpart" rule replaces with a single U+FFFD.
func maximalSubpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(s); i++ {
		c := s[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return i
}

// ---- loading ----

// hfFile is the part of tokenizer.json we read. Fields we do not list
// (truncation, padding, post_processor) do not change the ids of a text
// encoded without special tokens.
type hfFile struct {
	AddedTokens  []hfAddedToken  `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      json.RawMessage `json:"decoder"`
	Model        *hfModel        `json:"model"`
}

type hfAddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type hfModel struct {
	Type                    string          `json:"type"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
	Dropout                 *float64        `json:"dropout"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
}

// loadHF reads a HuggingFace tokenizer.json (or tokenizer.json.zst).
func loadHF(path string) (Tokenizer, error) {
	data, err := readMaybeZstd(path)
	if err != nil {
		return nil, err
	}
	t, err := parseHF(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer.json %s: %w", path, err)
	}
	t.name = "hf:" + hfName(path)
	return t, nil
}

func readMaybeZstd(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("tokenizer %q is a folder: give the path of the tokenizer.json inside it", path)
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("tokenizer %q: no such file; give o200k_base, cl100k_base, the path of a HuggingFace tokenizer.json, or a model id (ORG/NAME) whose tokenizer.json is in the Hugging Face cache", path)
		}
		return nil, fmt.Errorf("tokenizer %q: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxTokenizerJSON))
		if err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", path, err)
		}
		defer d.Close()
		r = d
	}
	data, err := io.ReadAll(io.LimitReader(r, maxTokenizerJSON+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: cannot read (corrupt zstd?): %w", path, err)
	}
	if len(data) > maxTokenizerJSON {
		return nil, fmt.Errorf("tokenizer %s: larger than %d MB, not a tokenizer.json", path, maxTokenizerJSON>>20)
	}
	return data, nil
}

// hfName names a tokenizer after the folder holding it when the file has
// the conventional name (…/Qwen3-8B/tokenizer.json → "Qwen3-8B"), else
// after the file (qwen3.json.zst → "qwen3").
func hfName(path string) string {
	if id := hubName(path); id != "" {
		return id // a model id's tokenizer from the hub cache: named by the id
	}
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, ".zst")
	base = strings.TrimSuffix(base, ".json")
	if base != "tokenizer" {
		return base
	}
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if d := filepath.Base(dir); d != "" && d != "." && d != string(filepath.Separator) {
		return d
	}
	return base
}

// decodeHFFile splits the file into sections with the hand-written scanner
// (see jsonscan.go) and decodes the small ones with encoding/json; vocab
// and merges stay raw for parseVocab and parseMergeList.
func decodeHFFile(data []byte) (*hfFile, error) {
	top, err := objectSpans(data)
	if err != nil {
		return nil, fmt.Errorf("%v; is the file truncated or not a tokenizer.json?", err)
	}
	f := &hfFile{Normalizer: top["normalizer"], PreTokenizer: top["pre_tokenizer"], Decoder: top["decoder"]}
	if raw, ok := top["added_tokens"]; ok {
		if err := json.Unmarshal(raw, &f.AddedTokens); err != nil {
			return nil, fmt.Errorf("added_tokens: %v", err)
		}
	}
	raw, ok := top["model"]
	if !ok || string(raw) == "null" {
		return f, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("\"model\" is not an object: not a HuggingFace tokenizer.json")
	}
	model, err := objectSpans(raw)
	if err != nil {
		return nil, err
	}
	m := &hfModel{Vocab: model["vocab"], Merges: model["merges"]}
	for key, dst := range map[string]any{
		"type": &m.Type, "dropout": &m.Dropout, "continuing_subword_prefix": &m.ContinuingSubwordPrefix,
		"end_of_word_suffix": &m.EndOfWordSuffix, "byte_fallback": &m.ByteFallback, "ignore_merges": &m.IgnoreMerges,
	} {
		if raw, ok := model[key]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, fmt.Errorf("model.%s: %v", key, err)
			}
		}
	}
	f.Model = m
	return f, nil
}

func parseHF(data []byte) (*hfTokenizer, error) {
	f, err := decodeHFFile(data)
	if err != nil {
		return nil, err
	}
	if f.Model == nil || f.Model.Type == "" && len(f.Model.Vocab) == 0 {
		return nil, errors.New("no \"model\" section: not a HuggingFace tokenizer.json")
	}
	if err := checkKind(f); err != nil {
		return nil, err
	}
	m := f.Model
	if m.Dropout != nil && *m.Dropout > 0 {
		return nil, errors.New("BPE dropout is set: encoding would be random, so counts cannot be exact")
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" || m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("BPE with a subword prefix/suffix is not byte-level BPE; %s", supportedKinds)
	}

	t := &hfTokenizer{ignoreMerges: m.IgnoreMerges, cache: newPieceCache()}
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.steps, t.prefix, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}

	vocab, err := parseVocab(m.Vocab)
	if err != nil {
		return nil, err
	}
	if len(vocab) == 0 {
		return nil, errors.New("model.vocab is empty")
	}
	// Ids index a slice, so bound them by the number of entries (with room
	// for the gaps real files have) rather than trust the file.
	idLimit := 4*(len(vocab)+len(f.AddedTokens)) + 1<<16
	maxID := 0
	for tok, id := range vocab {
		if id < 0 || id >= idLimit {
			return nil, fmt.Errorf("model.vocab: token %q has id %d, outside 0..%d", tok, id, idLimit-1)
		}
		maxID = max(maxID, id)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= idLimit {
			return nil, fmt.Errorf("added_tokens: %q has id %d, outside 0..%d", a.Content, a.ID, idLimit-1)
		}
		maxID = max(maxID, a.ID)
	}
	t.idBytes = make([][]byte, maxID+1)
	for tok, id := range vocab {
		t.idBytes[id] = byteLevelDecode(tok)
	}
	for i := range t.byteID {
		t.byteID[i] = -1
		if id, ok := vocab[string(byteToRune[i])]; ok {
			t.byteID[i] = int32(id)
		}
	}
	if t.ignoreMerges {
		t.whole = make(map[string]int, len(vocab))
		for _, id := range vocab {
			t.whole[string(t.idBytes[id])] = id
		}
	}

	var pairs [][2]string
	if len(m.Merges) > 0 {
		pairs, err = parseMergeList(m.Merges)
	}
	if err != nil {
		return nil, err
	}
	t.merges = make(map[uint64]merge, len(pairs))
	for rank, p := range pairs {
		a, okA := vocab[p[0]]
		b, okB := vocab[p[1]]
		ab, okAB := vocab[p[0]+p[1]]
		if !okA || !okB || !okAB {
			return nil, fmt.Errorf("merge %d (%q %q) uses a token missing from model.vocab; the file is inconsistent", rank, p[0], p[1])
		}
		// A pair listed twice keeps its last rank: tokenizers collects
		// the merges into a map in file order, overwriting.
		t.merges[pairKey(int32(a), int32(b))] = merge{rank: int32(rank), id: int32(ab)}
	}

	t.added, err = newAddedMatcher(f.AddedTokens)
	if err != nil {
		return nil, err
	}
	for _, a := range f.AddedTokens {
		t.idBytes[a.ID] = []byte(a.Content)
	}
	t.digest = hfDigest(vocab, pairs, f.AddedTokens, t.steps, t.prefix, f.Normalizer, m.IgnoreMerges)
	return t, nil
}

// checkKind refuses tokenizers whose ids we could not reproduce, naming
// what the file is.
func checkKind(f *hfFile) error {
	switch f.Model.Type {
	case "BPE", "":
		// "" is BPE in files written by old versions of tokenizers.
	case "WordPiece":
		return fmt.Errorf("a WordPiece tokenizer (BERT style), not byte-level BPE; %s", supportedKinds)
	case "Unigram":
		return fmt.Errorf("a Unigram (SentencePiece) tokenizer, not byte-level BPE; %s", supportedKinds)
	case "WordLevel":
		return fmt.Errorf("a WordLevel tokenizer, not byte-level BPE; %s", supportedKinds)
	default:
		return fmt.Errorf("model type %q is not byte-level BPE; %s", f.Model.Type, supportedKinds)
	}
	if hasType(f.PreTokenizer, "ByteLevel") {
		if f.Model.ByteFallback {
			return fmt.Errorf("byte_fallback BPE (SentencePiece style) is not byte-level BPE; %s", supportedKinds)
		}
		return nil
	}
	if hasType(f.PreTokenizer, "Metaspace") || hasType(f.Normalizer, "Prepend") || hasType(f.Normalizer, "Replace") || hasType(f.Decoder, "ByteFallback") || hasType(f.Decoder, "Metaspace") || f.Model.ByteFallback {
		return fmt.Errorf("a SentencePiece-style BPE tokenizer (Metaspace/byte fallback, like Llama 2 or Mistral), not byte-level BPE; %s", supportedKinds)
	}
	return fmt.Errorf("a character-level BPE tokenizer (no ByteLevel pre-tokenizer), not byte-level BPE; %s", supportedKinds)
}

// hasType reports whether a component (or any member of a Sequence) has
// the given "type".
func hasType(raw json.RawMessage, typ string) bool {
	if len(raw) == 0 {
		return false
	}
	var c struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
		Normalizers   []json.RawMessage `json:"normalizers"`
		Decoders      []json.RawMessage `json:"decoders"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return false
	}
	if c.Type == typ {
		return true
	}
	for _, l := range [][]json.RawMessage{c.PreTokenizers, c.Normalizers, c.Decoders} {
		for _, r := range l {
			if hasType(r, typ) {
				return true
			}
		}
	}
	return false
}

func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	var forms []norm.Form
	var walk func(raw json.RawMessage) error
	walk = func(raw json.RawMessage) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		var c struct {
			Type        string            `json:"type"`
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("normalizer: %v", err)
		}
		switch c.Type {
		case "Sequence":
			for _, n := range c.Normalizers {
				if err := walk(n); err != nil {
					return err
				}
			}
		case "NFC":
			forms = append(forms, norm.NFC)
		case "NFD":
			forms = append(forms, norm.NFD)
		case "NFKC":
			forms = append(forms, norm.NFKC)
		case "NFKD":
			forms = append(forms, norm.NFKD)
		default:
			return fmt.Errorf("normalizer %q is not supported (only NFC, NFD, NFKC, NFKD and Sequences of them); counts would not be exact", c.Type)
		}
		return nil
	}
	if err := walk(raw); err != nil {
		return nil, err
	}
	if len(forms) == 0 {
		return nil, nil
	}
	return func(s string) string {
		for _, f := range forms {
			if !f.IsNormalString(s) {
				s = f.String(s)
			}
		}
		return s
	}, nil
}

// hfDigest hashes everything that decides the ids of a text: the
// vocabulary (id order), the merges (rank order), the added tokens, the
// pre-tokenizer and normalizer. JSON key order and whitespace do not
// matter.
func hfDigest(vocab map[string]int, merges [][2]string, added []hfAddedToken, steps []preStep, prefix bool, normalizer json.RawMessage, ignoreMerges bool) string {
	h := sha256.New()
	var buf [binary.MaxVarintLen64]byte
	writeStr := func(s string) {
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		io.WriteString(h, s)
	}
	writeInt := func(v int) { h.Write(buf[:binary.PutVarint(buf[:], int64(v))]) }

	writeStr("llmreplay hf byte-level bpe v1")
	type entry struct {
		id  int
		tok string
	}
	toks := make([]entry, 0, len(vocab))
	for tok, id := range vocab {
		toks = append(toks, entry{id, tok})
	}
	slices.SortFunc(toks, func(a, b entry) int {
		if a.id != b.id {
			return a.id - b.id
		}
		return strings.Compare(a.tok, b.tok)
	})
	writeInt(len(toks))
	for _, e := range toks {
		writeInt(e.id)
		writeStr(e.tok)
	}
	writeInt(len(merges))
	for _, m := range merges {
		writeStr(m[0])
		writeStr(m[1])
	}
	a := slices.Clone(added)
	sort.Slice(a, func(i, j int) bool { return a[i].ID < a[j].ID })
	writeInt(len(a))
	for _, t := range a {
		writeInt(t.ID)
		writeStr(t.Content)
		writeStr(fmt.Sprint(t.SingleWord, t.LStrip, t.RStrip, t.Normalized))
	}
	writeInt(len(steps))
	for _, s := range steps {
		writeStr(s.describe())
	}
	writeStr(fmt.Sprint("prefix", prefix, "ignore_merges", ignoreMerges))
	writeStr(canonicalJSON(normalizer))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-marshals raw so key order and spacing do not change the
// digest (encoding/json sorts map keys).
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(bytes.TrimSpace(b))
}
