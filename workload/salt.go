package workload

import (
	"slices"
	"strings"
)

// WithSalt returns a copy of r whose salt slot holds words instead of the
// words it was built with. Every salt word is one token, so the token count
// does not change. It uses the first Salt.Words words, cycling through
// words if there are fewer; it returns r unchanged if r has no salt slot or
// words is empty. r itself, and the Messages it shares with other copies,
// are left untouched.
func (r Request) WithSalt(words []string) Request {
	if r.Salt.Words == 0 || len(words) == 0 {
		return r
	}
	var b strings.Builder
	for i := 0; i < r.Salt.Words; i++ {
		b.WriteByte(' ')
		b.WriteString(words[i%len(words)])
	}
	salt := b.String()
	replace := func(text string) string {
		if r.Salt.Start < 0 || r.Salt.End > len(text) || r.Salt.Start > r.Salt.End {
			return text
		}
		return text[:r.Salt.Start] + salt + text[r.Salt.End:]
	}
	if len(r.Messages) > 0 {
		last := len(r.Messages) - 1
		if r.Salt.End > len(r.Messages[last].Content) {
			return r
		}
		r.Messages = slices.Clone(r.Messages)
		r.Messages[last].Content = replace(r.Messages[last].Content)
	} else {
		if r.Salt.End > len(r.Prompt) {
			return r
		}
		r.Prompt = replace(r.Prompt)
	}
	r.Salt.End = r.Salt.Start + len(salt)
	return r
}
