package tokenize

// fastSplitter returns a hand-written matcher for a pre-tokenizer regex it
// knows, or nil to use regexp2.
func fastSplitter(pattern string) func(s string, match func(start, end int)) {
	return nil
}
