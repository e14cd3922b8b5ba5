package tokenize

import "sync"

var (
	cacheMu sync.Mutex
	cache   = map[string]Tokenizer{}
)

// Load returns the tokenizer named by spec: a tiktoken encoding name
// ("o200k_base", "cl100k_base") or the path of a HuggingFace tokenizer.json
// (optionally zstd-compressed, ending .zst). Loaded tokenizers are cached by
// spec, since building one takes a noticeable fraction of a second.
func Load(spec string) (Tokenizer, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if t, ok := cache[spec]; ok {
		return t, nil
	}
	var (
		t   Tokenizer
		err error
	)
	if isTiktokenName(spec) {
		t, err = newTiktoken(spec)
	} else {
		t, err = loadHF(spec)
	}
	if err != nil {
		return nil, err
	}
	cache[spec] = t
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
