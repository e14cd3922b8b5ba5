package tokenize

import (
	"fmt"
	"os"
	"sync"
)

var (
	cacheMu sync.Mutex
	cache   = map[string]Tokenizer{}
)

// Load returns the tokenizer named by spec: a tiktoken encoding name
// ("o200k_base", "cl100k_base"), the path of a HuggingFace tokenizer.json
// (optionally zstd-compressed, ending .zst), or a Hugging Face model id
// whose tokenizer.json is in the local hub cache (see Resolve). Loaded tokenizers are cached,
// since building one takes a noticeable fraction of a second: encodings by
// name, files by path, size and modification time, so a file replaced at
// the same path is read again (Recall's digest check depends on it).
func Load(spec string) (Tokenizer, error) {
	r, err := Resolve(spec)
	if err != nil {
		return nil, err
	}
	spec = r.Path
	cacheMu.Lock()
	defer cacheMu.Unlock()
	key := spec
	if !isTiktokenName(spec) {
		if st, err := os.Stat(spec); err == nil {
			key = fmt.Sprintf("%s\x00%d\x00%d", spec, st.Size(), st.ModTime().UnixNano())
		}
	}
	if t, ok := cache[key]; ok {
		return t, nil
	}
	var t Tokenizer
	if isTiktokenName(spec) {
		t, err = newTiktoken(spec)
	} else {
		t, err = loadHF(spec)
	}
	if err != nil {
		return nil, err
	}
	cache[key] = t
	return t, nil
}

func isTiktokenName(s string) bool {
	for _, n := range TiktokenNames {
		if s == n {
			return true
		}
	}
	// A bare word that is not a path is meant as an encoding name: let
	// newTiktoken give the "unknown tokenizer" error rather than a confusing
	// "file not found".
	for _, r := range s {
		if r == '/' || r == '.' || r == '\\' {
			return false
		}
	}
	return true
}
