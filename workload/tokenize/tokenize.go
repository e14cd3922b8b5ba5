// Package tokenize counts tokens exactly, the way a model's tokenizer would.
//
// llmreplay promises prompts of exactly N input tokens, so every count in
// the tool comes from here, behind one interface: the tiktoken encodings
// o200k_base and cl100k_base, and any HuggingFace byte-level BPE
// tokenizer.json (Qwen, Llama 3, DeepSeek, GPT-2 style).
//
// # tiktoken
//
// The vocabularies are OpenAI's (MIT), as github.com/tiktoken-go/tokenizer
// carries them: copied into vocab/ (compiled in, no download) and checked
// id for id against that library by the tests. Splitting and merging are done here, because that
// library's generated regex engines split some text differently from
// OpenAI's tiktoken ("\n \n", control characters). Ids are checked
// against js-tiktoken. Special tokens (<|endoftext|>) are encoded as the
// plain text they are, like tiktoken's encode_ordinary.
//
// # HuggingFace tokenizer.json
//
// Load reads the file (optionally zstd-compressed, ending .zst) and
// reproduces what the Rust tokenizers library does for encode(text,
// add_special_tokens=False):
//
//   - added_tokens (special or not) are split out first, leftmost-longest,
//     honouring lstrip, rstrip, single_word and normalized;
//   - the normalizer: none, NFC, NFD, NFKC, NFKD, or a Sequence of them;
//   - the pre_tokenizer: Split (regex or literal, every behaviour and
//     invert), Digits, and ByteLevel (add_prefix_space, use_regex with the
//     GPT-2 pattern), alone or in a Sequence ending with ByteLevel;
//   - the BPE model: vocab, merges as "a b" strings or ["a","b"] pairs,
//     ignore_merges (Llama 3), over the GPT-2 byte-to-character alphabet.
//
// Split regexes run on github.com/dlclark/regexp2 (they need lookahead),
// except the common GPT-2, Qwen, Llama 3/cl100k and o200k patterns, which
// have hand-written matchers tested against regexp2. A per-piece cache
// makes prose, which repeats words, cheap. Ids are checked against
// @lenml/tokenizers (a JS port of HF tokenizers): Qwen3 and DeepSeek-V3 in
// the tests, Llama 3 (not committed, for its licence) by hand.
//
// Not supported, with an error saying so rather than a wrong count:
// WordPiece, Unigram, WordLevel, SentencePiece-style BPE (Metaspace,
// byte_fallback: Llama 2, Mistral), character-level BPE, BPE dropout,
// other normalizers (Lowercase, Replace, Precompiled …) and other
// pre-tokenizers (Whitespace, Punctuation, Metaspace …). The
// post_processor is ignored: it only adds BOS/EOS-style tokens, which a
// server adds (or its chat template does) and reports in its usage.
// Invalid UTF-8 is replaced by U+FFFD before encoding. Decode maps ids
// back through the byte-level alphabet (what the ByteLevel decoder does);
// the file's decoder section is not otherwise consulted.
package tokenize

import "unicode/utf8"

// Tokenizer turns text into token ids. Implementations are safe for
// concurrent use.
type Tokenizer interface {
	// Name is what a workload records: "o200k_base", "cl100k_base", or
	// "hf:<name>" for a tokenizer.json.
	Name() string
	// Digest is "sha256:<hex>" of the vocabulary and merges, so two files
	// built with the same name but a different vocabulary can be told apart.
	Digest() string
	// Encode returns the token ids of text as the model's server would
	// count them: tiktoken encodes special tokens as plain text; a
	// tokenizer.json matches its added tokens, as HF tokenizers does.
	Encode(text string) []int
	// Count is len(Encode(text)), possibly faster.
	Count(text string) int
	// Decode returns the text of ids.
	Decode(ids []int) string
}

// eachFunc calls yield with the ids of every piece of text (valid UTF-8)
// in order: the one loop both tokenizer kinds implement, Encode and Count
// are built on it.
type eachFunc func(text string, yield func(ids []int32))

// validUTF8 replaces invalid UTF-8 by U+FFFD per maximal bad subsequence,
// as a server decoding the request body does, before any piece is split.
func validUTF8(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	return toValidUTF8(text)
}

func encodeAll(each eachFunc, text string) []int {
	var out []int
	each(validUTF8(text), func(ids []int32) {
		for _, id := range ids {
			out = append(out, int(id))
		}
	})
	return out
}

func countAll(each eachFunc, text string) int {
	n := 0
	each(validUTF8(text), func(ids []int32) { n += len(ids) })
	return n
}

// decode concatenates the bytes of ids, token(id) each for ids in [0, n),
// skipping unknown ones.
func decode[B ~string | ~[]byte](n int, token func(id int) B, ids []int) string {
	var b []byte
	for _, id := range ids {
		if id >= 0 && id < n {
			b = append(b, token(id)...)
		}
	}
	return string(b)
}
