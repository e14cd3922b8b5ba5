// Package tokenize counts tokens exactly, the way a model's tokenizer would.
//
// llmreplay promises prompts of exactly N input tokens, so every count in
// the tool comes from here: the tiktoken encodings o200k_base and
// cl100k_base, and any HuggingFace byte-level BPE tokenizer.json (Qwen,
// Llama 3, DeepSeek …) behind one interface.
package tokenize

// Tokenizer turns text into token ids. Implementations are safe for
// concurrent use.
type Tokenizer interface {
	// Name is what a workload records: "o200k_base", "cl100k_base", or
	// "hf:<name>" for a tokenizer.json.
	Name() string
	// Digest is "sha256:<hex>" of the vocabulary and merges, so two files
	// built with the same name but a different vocabulary can be told apart.
	Digest() string
	// Encode returns the token ids of text, special tokens treated as text.
	Encode(text string) []int
	// Count is len(Encode(text)), possibly faster.
	Count(text string) int
	// Decode returns the text of ids.
	Decode(ids []int) string
}
