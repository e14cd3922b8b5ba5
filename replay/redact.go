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

// scrub removes the key and the URL's query values from s: for what the
// server said outside a record (model discovery, --api auto's probes).
func (e *engine) scrub(s string) string {
	if len(e.cfg.APIKey) >= minRedactKey {
		s = strings.ReplaceAll(s, e.cfg.APIKey, "REDACTED")
	}
	for _, v := range e.querySecrets {
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

// querySecrets are the values of base's query string that are long enough
// to redact: a server echoing the request line (or an error quoting it)
// must not put them into the trace.
func querySecrets(base string) []string {
	_, raw, ok := strings.Cut(base, "?")
	if !ok {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, vs := range q {
		for _, v := range vs {
			if len(v) >= minRedactKey {
				out = append(out, v)
				if e := url.QueryEscape(v); e != v {
					out = append(out, e)
				}
			}
		}
	}
	return out
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
		// Every query value is treated as a secret: names vary (key,
		// code, sig, api-version is harmless but cannot be told apart
		// from a token by its name alone), and a leak cannot be undone.
		q := u.Query()
		for k := range q {
			q.Set(k, "REDACTED")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}
