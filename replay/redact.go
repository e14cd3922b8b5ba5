package replay

import (
	"net/url"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// Redaction: nothing a server sends back, and no URL, reaches a file or a
// terminal with the caller's key or URL credentials in it.

// redactKey removes the API key from everything the server sent back. Some
// servers quote the key they were given ("Incorrect API key provided: sk-…")
// and an echo server streams it back, but a trace is made to be shared.
func redactKey(rec *trace.Record, key string) {
	if len(key) < minRedactKey {
		return
	}
	scrub := func(s *string) {
		if strings.Contains(*s, key) {
			*s = strings.ReplaceAll(*s, key, "REDACTED")
		}
	}
	scrub(&rec.Usage)
	scrub(&rec.Timings)
	scrub(&rec.FinishReason)
	if rec.Error != nil {
		scrub(&rec.Error.Message)
		scrub(&rec.Error.Body)
	}
	for i := range rec.Chunks {
		scrub(&rec.Chunks[i].Text)
		scrub(&rec.Chunks[i].Reasoning)
	}
}

// RedactURL returns raw without user info and without query parameters that
// look like credentials, for storing and printing. It never fails: an
// unparseable URL is replaced by a placeholder rather than echoed back,
// since it might hold a key.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			lk := strings.ToLower(k)
			if strings.Contains(lk, "key") || strings.Contains(lk, "token") ||
				strings.Contains(lk, "secret") || strings.Contains(lk, "auth") ||
				strings.Contains(lk, "password") || strings.Contains(lk, "sig") {
				q.Set(k, "REDACTED")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
