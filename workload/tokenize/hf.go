package tokenize

import "fmt"

// loadHF reads a HuggingFace tokenizer.json. (Being implemented.)
func loadHF(path string) (Tokenizer, error) {
	return nil, fmt.Errorf("tokenizer.json support is not built yet: %s", path)
}
