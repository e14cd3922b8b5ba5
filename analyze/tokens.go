package analyze

import (
	"encoding/json"
	"strings"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// DefaultTokenizer counts received text when a trace names no tokenizer.
const DefaultTokenizer = "o200k_base"

// maxCacheEntries bounds the per-text count cache. Streamed chunk texts
// repeat heavily (a count-up streams ", 1", ", 2" … and a chat model a few
// thousand distinct pieces), so a small cache answers nearly every lookup;
// when it fills it is dropped and rebuilt, keeping memory bounded whatever
// the trace holds.
const maxCacheEntries = 1 << 16

// counter counts the tokens of chunk texts with a tokenizer, caching each
// distinct text's count. Counting per chunk and summing differs from
// counting the whole text only where the tokenizer would merge across a
// chunk boundary (docs/METRICS.md explains when that happens).
type counter struct {
	tok      tokenize.Tokenizer
	spec     string
	source   string // the tokenizer.json used, "" for a built-in encoding
	fallback string // why the tokenizer could not be loaded; counts are chunk counts
	// model says the tokenizer is taken to be the model's own, so its count
	// of the received text may judge the server's usage: one given to the
	// analysis (--tokenizer), or a tokenizer.json the workload was built
	// from (a model's vocabulary, chosen for it). A built-in encoding
	// (o200k_base, cl100k_base) is the default whatever the model, and is
	// not (docs/METRICS.md, usage_mismatch).
	model bool
	cache map[string]int
	// short answers the texts of at most 7 bytes (nearly every streamed
	// token) from a table indexed by the text's bytes: a map lookup per
	// chunk, hashing the string, was a sixth of the analysis's time. A
	// slot holds one text and is overwritten by the next that lands on
	// it; a miss asks the map, whose answer is the same.
	short [1 << shortBits]shortCount
}

// newCounter recalls the trace's tokenizer (name, and for a tokenizer.json
// the path and digest the workload recorded), or loads override instead.
func newCounter(name, path, digest, override string) *counter {
	spec := name
	if override != "" {
		spec = override
	}
	c := &counter{spec: spec, cache: make(map[string]int)}
	t, source, err := tokenize.Recall(name, path, digest, override)
	if err != nil {
		c.fallback = err.Error()
		return c
	}
	c.tok, c.source = t, source
	c.model = override != "" || source != ""
	return c
}

// count returns the token count of s; without a tokenizer a non-empty
// text counts as one token (the chunk-count fallback).
func (c *counter) count(s string) int {
	if s == "" {
		return 0
	}
	if c.tok == nil {
		return 1
	}
	if len(s) > 7 {
		return c.lookup(s)
	}
	key := uint64(len(s))
	for i := 0; i < len(s); i++ {
		key |= uint64(s[i]) << (8 * (i + 1))
	}
	slot := &c.short[(key*0x9e3779b97f4a7c15)>>(64-shortBits)]
	if slot.key == key {
		return int(slot.n)
	}
	n := c.lookup(s)
	slot.key, slot.n = key, int32(n) // a count of 7 bytes fits
	return n
}

// lookup counts s through the map of every text seen.
func (c *counter) lookup(s string) int {
	if n, ok := c.cache[s]; ok {
		return n
	}
	n := c.tok.Count(s)
	if len(c.cache) >= maxCacheEntries {
		clear(c.cache)
	}
	// The reader may reuse the record's memory; keep our own copy of the key.
	c.cache[strings.Clone(s)] = n
	return n
}

// shortCount remembers the count of one text of at most 7 bytes, the
// text itself packed into key with its length in the low byte (so no
// text's key is 0, the empty slot's).
type shortCount struct {
	key uint64
	n   int32
}

// shortBits sizes counter.short: 4,096 slots, 64 KiB.
const shortBits = 12

// usageCounts reads the server's own token counts from a usage object
// (OpenAI: completion_tokens/prompt_tokens; Ollama: eval_count and
// prompt_eval_count; Anthropic: output_tokens, and input_tokens plus the
// cache_read and cache_creation input tokens, which input_tokens leaves
// out) or a timings object (llama.cpp: predicted_n and prompt_n). Missing
// counts are −1.
func usageCounts(usage, timings string) (completion, prompt int) {
	completion, prompt = -1, -1
	var u struct {
		Completion *int `json:"completion_tokens"`
		Prompt     *int `json:"prompt_tokens"`
		EvalCount  *int `json:"eval_count"`
		PromptEval *int `json:"prompt_eval_count"`
		PredictedN *int `json:"predicted_n"`
		PromptN    *int `json:"prompt_n"`
		Output     *int `json:"output_tokens"`
		Input      *int `json:"input_tokens"`
		CacheRead  *int `json:"cache_read_input_tokens"`
		CacheNew   *int `json:"cache_creation_input_tokens"`
		Generated  *int `json:"generated_tokens"` // TGI's details
		InputLen   *int `json:"input_length"`
	}
	for _, s := range []string{usage, timings} {
		if s == "" || s == "null" {
			continue
		}
		u.Completion, u.Prompt, u.EvalCount, u.PromptEval, u.PredictedN, u.PromptN = nil, nil, nil, nil, nil, nil
		u.Output, u.Input, u.CacheRead, u.CacheNew, u.Generated, u.InputLen = nil, nil, nil, nil, nil, nil
		if json.Unmarshal([]byte(s), &u) != nil {
			continue
		}
		if completion < 0 {
			completion = firstSet(u.Completion, u.EvalCount, u.PredictedN, u.Output, u.Generated)
		}
		if prompt < 0 {
			prompt = firstSet(u.Prompt, u.PromptEval, u.PromptN, u.InputLen)
			if prompt < 0 && u.Input != nil {
				prompt = *u.Input
				for _, c := range []*int{u.CacheRead, u.CacheNew} {
					if c != nil {
						prompt += *c
					}
				}
			}
		}
	}
	return completion, prompt
}

func firstSet(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return -1
}
