package tokenize

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// miniJSON builds a small byte-level BPE tokenizer.json: the 256 byte
// symbols (ids 0-255), the merges given (each adds the merged token), any
// extra whole tokens, and the given pre_tokenizer/normalizer/added tokens.
type mini struct {
	merges       [][2]string // in byte-level alphabet
	extra        []string    // extra vocabulary entries (byte-level alphabet)
	arrayMerges  bool
	ignoreMerges bool
	pre          string // raw JSON; default ByteLevel(use_regex)
	normalizer   string // raw JSON; default null
	added        []hfAddedToken
}

func (m mini) json() []byte {
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	add := func(s string) {
		if _, ok := vocab[s]; !ok {
			vocab[s] = len(vocab)
		}
	}
	var merges any
	var strs []string
	var arrs [][]string
	for _, p := range m.merges {
		add(p[0] + p[1])
		strs = append(strs, p[0]+" "+p[1])
		arrs = append(arrs, []string{p[0], p[1]})
	}
	merges = strs
	if m.arrayMerges {
		merges = arrs
	}
	for _, e := range m.extra {
		add(e)
	}
	pre := m.pre
	if pre == "" {
		pre = `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}`
	}
	normalizer := m.normalizer
	if normalizer == "" {
		normalizer = "null"
	}
	added := m.added
	if added == nil {
		added = []hfAddedToken{}
	}
	doc := map[string]any{
		"version":        "1.0",
		"added_tokens":   added,
		"normalizer":     json.RawMessage(normalizer),
		"pre_tokenizer":  json.RawMessage(pre),
		"post_processor": nil,
		"decoder":        json.RawMessage(`{"type":"ByteLevel"}`),
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "fuse_unk": false, "byte_fallback": false,
			"ignore_merges": m.ignoreMerges, "vocab": vocab, "merges": merges,
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func (m mini) load(t *testing.T) *hfTokenizer {
	t.Helper()
	tok, err := parseHF(m.json())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bl writes s in the byte-level alphabet (" " → "Ġ").
func bl(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteToRune[s[i]])
	}
	return b.String()
}

var theMerges = [][2]string{{"t", "h"}, {"th", "e"}, {"Ġ", "the"}, {"a", "b"}, {"ab", "c"}}

func TestHFMergeForms(t *testing.T) {
	s := mini{merges: theMerges}.load(t)
	a := mini{merges: theMerges, arrayMerges: true}.load(t)
	text := "the abc, the bat"
	if !slices.Equal(s.Encode(text), a.Encode(text)) {
		t.Errorf("string merges %v != array merges %v", s.Encode(text), a.Encode(text))
	}
	if s.Digest() != a.Digest() {
		t.Errorf("digest depends on the merges' spelling: %s vs %s", s.Digest(), a.Digest())
	}
	// "the" → one token (t h, th e); " the" → one token (Ġ the).
	if got := s.Encode("the the"); len(got) != 2 {
		t.Errorf("Encode(%q) = %v, want 2 tokens", "the the", got)
	}
	other := mini{merges: theMerges[:3]}.load(t)
	if other.Digest() == s.Digest() {
		t.Error("different merges, same digest")
	}
}

func TestHFIgnoreMerges(t *testing.T) {
	// "abd" is in the vocabulary but no merge builds it.
	m := mini{merges: theMerges, extra: []string{"abd"}}
	if got := m.load(t).Encode("abd"); len(got) != 2 { // ab + d
		t.Errorf("without ignore_merges: %v, want [ab d]", got)
	}
	m.ignoreMerges = true
	tok := m.load(t)
	if got := tok.Encode("abd"); len(got) != 1 || tok.Decode(got) != "abd" {
		t.Errorf("with ignore_merges: %v, want the single token abd", got)
	}
}

func TestHFPrefixSpace(t *testing.T) {
	tok := mini{merges: theMerges, pre: `{"type":"ByteLevel","add_prefix_space":true,"use_regex":true}`}.load(t)
	if a, b := tok.Encode("the"), tok.Encode(" the"); !slices.Equal(a, b) || len(a) != 1 {
		t.Errorf("add_prefix_space: Encode(the)=%v Encode( the)=%v, want one equal token", a, b)
	}
	noRegex := mini{merges: theMerges, pre: `{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}`}.load(t)
	// Without the regex the whole text is one piece, so merges cross
	// word boundaries: "the the" is still t-h-e merged, Ġ-the merged.
	if got := noRegex.Encode("the the"); len(got) != 2 {
		t.Errorf("use_regex false: %v", got)
	}
	if got := noRegex.Encode("ab!c"); len(got) != 3 {
		t.Errorf("use_regex false: Encode(ab!c) = %v, want [ab ! c]", got)
	}
}

func TestHFAddedTokens(t *testing.T) {
	tok := mini{merges: theMerges, added: []hfAddedToken{
		{ID: 1000, Content: "<s>", Special: true},
		{ID: 1001, Content: "<L>", LStrip: true},
		{ID: 1002, Content: "<R>", RStrip: true},
		{ID: 1003, Content: "<W>", SingleWord: true},
		{ID: 1004, Content: "<s>x"}, // longest match wins over <s>
	}}.load(t)
	space := tok.Encode(" ")
	if len(space) != 1 {
		t.Fatalf("Encode(space) = %v", space)
	}
	sp := space[0]
	tests := []struct {
		in   string
		want []int
	}{
		{"<s>", []int{1000}},
		{"a<s>b", []int{'a', 1000, 'b'}},
		{"<s>x<s>", []int{1004, 1000}},
		{"a  <L>", []int{'a', 1001}},
		{"<R>  b", []int{1002, 'b'}},
		{"a <W> b", []int{'a', sp, 1003, sp, 'b'}},
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	// single_word: inside a word it is plain text.
	if got := tok.Encode("a<W>b"); slices.Contains(got, 1003) {
		t.Errorf("Encode(a<W>b) = %v matched a single_word token inside a word", got)
	}
	if got := tok.Decode([]int{1000, 'h', 'i'}); got != "<s>hi" {
		t.Errorf("Decode = %q", got)
	}
}

func TestHFNormalizer(t *testing.T) {
	tok := mini{normalizer: `{"type":"Sequence","normalizers":[{"type":"NFC"}]}`}.load(t)
	if a, b := tok.Encode("cafe\u0301"), tok.Encode("caf\u00e9"); !slices.Equal(a, b) {
		t.Errorf("NFC: %v != %v", a, b)
	}
	raw := mini{}.load(t)
	if a, b := raw.Encode("cafe\u0301"), raw.Encode("caf\u00e9"); slices.Equal(a, b) {
		t.Errorf("no normalizer, yet %v == %v", a, b)
	}
}

func TestSplitBehaviours(t *testing.T) {
	// The example tokenizers documents for SplitDelimiterBehavior.
	text := "the-final--countdown"
	tests := []struct {
		behavior string
		invert   bool
		want     []string
	}{
		{"Removed", false, []string{"the", "final", "countdown"}},
		{"Isolated", false, []string{"the", "-", "final", "-", "-", "countdown"}},
		{"MergedWithPrevious", false, []string{"the-", "final-", "-", "countdown"}},
		{"MergedWithNext", false, []string{"the", "-final", "-", "-countdown"}},
		{"Contiguous", false, []string{"the", "-", "final", "--", "countdown"}},
		{"Removed", true, []string{"-", "-", "-"}},
	}
	for _, lit := range []bool{true, false} {
		for _, tc := range tests {
			st := preStep{pattern: "-", literal: lit, behavior: behaviorNames[tc.behavior], invert: tc.invert}
			if err := st.compile(); err != nil {
				t.Fatal(err)
			}
			var got []string
			st.split(text, func(p string) { got = append(got, p) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s invert=%v literal=%v: %q, want %q", tc.behavior, tc.invert, lit, got, tc.want)
			}
		}
	}
	dig := preStep{digits: true, behavior: behContiguous}
	var got []string
	dig.split("ab123c4", func(p string) { got = append(got, p) })
	if want := []string{"ab", "123", "c", "4"}; !slices.Equal(got, want) {
		t.Errorf("Digits: %q, want %q", got, want)
	}
}

func TestHFRoundTrip(t *testing.T) {
	for _, name := range hfTestdata {
		tok := loadT(t, hfPath(name)).(*hfTokenizer)
		for _, c := range readGolden(t, name) {
			want := c.Text
			if tok.normalize != nil {
				want = tok.normalize(want)
			}
			if got := tok.Decode(tok.Encode(c.Text)); got != want {
				t.Errorf("%s: round trip of %.40q gave %.40q", name, c.Text, got)
			}
		}
	}
}

func TestHFLongPiece(t *testing.T) {
	// Long pieces take the heap path; it must agree with the scan path.
	tok := loadT(t, hfPath("deepseek_v3")).(*hfTokenizer)
	for _, s := range []string{strings.Repeat("ab", 200), strings.Repeat("x", 150), "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgZW5jb2RlZCB0ZXh0IGZvciB0ZXN0aW5nIHRoZSBsb25nIHBpZWNlIHBhdGg"} {
		var sym []int32
		for i := 0; i < len(s); i++ {
			sym = append(sym, tok.byteID[s[i]])
		}
		long := tok.bpeLong(slices.Clone(sym))
		sym = tok.bpeScan(sym)
		if !slices.Equal(long, sym) {
			t.Errorf("%.20q…: heap %v, scan %v", s, long, sym)
		}
	}
}

func TestHFInvalidUTF8(t *testing.T) {
	tok := loadT(t, hfPath("qwen3"))
	for _, s := range []string{"\xff", "ab\xc3", "\xe2\x82", "ok\x80\x80ok"} {
		ids := tok.Encode(s)
		if tok.Count(s) != len(ids) {
			t.Errorf("%q: Count %d != len(Encode) %d", s, tok.Count(s), len(ids))
		}
		if got, want := tok.Decode(ids), toValidUTF8(s); got != want || !utf8.ValidString(got) {
			t.Errorf("%q: decoded %q, want %q", s, got, want)
		}
	}
}

func TestHFName(t *testing.T) {
	tests := map[string]string{
		"testdata/qwen3/tokenizer.json.zst": "qwen3",
		"/models/Qwen3-8B/tokenizer.json":   "Qwen3-8B",
		"/x/llama3.json":                    "llama3",
		"/x/deepseek.json.zst":              "deepseek",
	}
	for in, want := range tests {
		if got := hfName(in); got != want {
			t.Errorf("hfName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, data)
		return p
	}
	zst := func(data []byte) []byte {
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(data, nil)
	}
	valid := mini{merges: theMerges}.json()
	tests := []struct {
		name string
		spec string
		want []string // substrings of the error
	}{
		{"unknown name", "o300k_base", []string{"o300k_base", "o200k_base", "cl100k_base", "tokenizer.json"}},
		{"missing file", filepath.Join(dir, "nope", "tokenizer.json"), []string{"no such file", "o200k_base"}},
		{"folder", dir, []string{"is a folder", "tokenizer.json"}},
		{"corrupt json", write("corrupt.json", valid[:len(valid)/2]), []string{"corrupt.json", "not valid JSON"}},
		{"not json", write("bin.json", []byte{0, 1, 2, 0xff}), []string{"bin.json", "not valid JSON"}},
		{"corrupt zstd", write("bad.json.zst", []byte("not zstd at all")), []string{"bad.json.zst"}},
		{"no model", write("nomodel.json", []byte(`{"version":"1.0"}`)), []string{"nomodel.json", "no \"model\""}},
		{"wordpiece", write("wp.json", []byte(`{"model":{"type":"WordPiece","vocab":{"a":0}},"pre_tokenizer":{"type":"BertPreTokenizer"}}`)),
			[]string{"wp.json", "WordPiece", "byte-level BPE", "o200k_base"}},
		{"unigram", write("ug.json", []byte(`{"model":{"type":"Unigram","vocab":[["a",0.0]]}}`)),
			[]string{"Unigram", "byte-level BPE", "cl100k_base"}},
		{"sentencepiece bpe", write("llama2.json", []byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"byte_fallback":true},"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace"}]},"pre_tokenizer":null,"decoder":{"type":"Sequence","decoders":[{"type":"ByteFallback"}]}}`)),
			[]string{"SentencePiece", "Llama 2", "byte-level BPE"}},
		{"metaspace", write("meta.json", []byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Metaspace","replacement":"▁"}}`)),
			[]string{"SentencePiece", "byte-level BPE"}},
		{"char-level bpe", write("char.json", []byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Whitespace"}}`)),
			[]string{"character-level", "byte-level BPE"}},
		{"unsupported normalizer", write("lower.json", mini{normalizer: `{"type":"Lowercase"}`}.json()), []string{"Lowercase", "not supported"}},
		{"unsupported pre-tokenizer", write("punct.json", mini{pre: `{"type":"Sequence","pretokenizers":[{"type":"Punctuation"},{"type":"ByteLevel"}]}`}.json()), []string{"Punctuation", "not supported"}},
		{"bad merge", write("merge.json", []byte(strings.Replace(string(valid), `"a b"`, `"a zz"`, 1))), []string{"merge", "missing from model.vocab"}},
		{"bad regex", write("re.json", mini{pre: `{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(["},"behavior":"Isolated"},{"type":"ByteLevel","use_regex":false}]}`}.json()), []string{"does not compile"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.spec)
			if err == nil {
				t.Fatalf("Load(%s) succeeded", tc.spec)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
	// A valid file, compressed, loads.
	p := write("ok.json.zst", zst(valid))
	tok, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name() != "hf:ok" || !strings.HasPrefix(tok.Digest(), "sha256:") {
		t.Errorf("Name %q Digest %q", tok.Name(), tok.Digest())
	}
}

// TestConcurrentEncode runs every tokenizer from several goroutines at once
// (the race detector checks the shared piece cache and lazy tables).
func TestConcurrentEncode(t *testing.T) {
	specs := []string{hfPath("qwen3"), "o200k_base", "cl100k_base"}
	cases := readGolden(t, "qwen3")
	for _, spec := range specs {
		tok := loadT(t, spec)
		want := make([][]int, len(cases))
		for i, c := range cases {
			want[i] = tok.Encode(c.Text)
		}
		errs := make(chan string, 4*len(cases))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range cases {
					i := (k + g*7) % len(cases)
					if got := tok.Encode(cases[i].Text); !slices.Equal(got, want[i]) {
						errs <- fmt.Sprintf("%s case %d: concurrent encode differs", spec, i)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// TestHFDuplicateMerge: a pair listed twice takes its last rank, as
// tokenizers' merge map (filled in file order) does.
func TestHFDuplicateMerge(t *testing.T) {
	tok := mini{merges: [][2]string{{"a", "b"}, {"b", "c"}, {"a", "b"}}}.load(t)
	ids := tok.Encode("abc")
	var parts []string
	for _, id := range ids {
		parts = append(parts, tok.Decode([]int{id}))
	}
	if want := []string{"a", "bc"}; !slices.Equal(parts, want) {
		t.Errorf("Encode(abc) = %q, want %q", parts, want)
	}
}
