package replay

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/trace"
)

// Redaction: nothing a server sends back, and no URL, reaches a file or a
// terminal with the caller's key or URL credentials in it.

// A secret is found not only whole: a server may quote a key cut by its
// own clipping (a 300-byte message ending inside it), the client clips
// bodies at 4 KiB, a streamed echo splits a key across chunks, and a JSON
// body may spell it with \u escapes. So every run of at least
// minFragment bytes that is part of a secret is redacted, chunk texts are
// searched joined (a key split across two chunks is one run), and a string
// with JSON escapes is also searched in its decoded form. A fragment
// shorter than minFragment (at the very edge of a cut) is left: it cannot
// be told from ordinary text, and cannot be used as the key.
const minFragment = 8

const redacted = "REDACTED"

// secretSpans returns the [start, end) spans of s that are runs of at
// least minFragment bytes of some secret, sorted and merged.
func secretSpans(s string, secrets []string) [][2]int {
	var spans [][2]int
	for _, k := range secrets {
		if len(k) < minFragment {
			continue
		}
		// Every minFragment-byte piece of k, found in s, then grown both
		// ways for as long as s and k agree.
		for i := 0; i+minFragment <= len(k); i++ {
			gram := k[i : i+minFragment]
			for from := 0; ; {
				j := strings.Index(s[from:], gram)
				if j < 0 {
					break
				}
				p := from + j
				lo, hi := p, p+minFragment
				for ki := i; lo > 0 && ki > 0 && s[lo-1] == k[ki-1]; ki-- {
					lo--
				}
				for ki := i + minFragment; hi < len(s) && ki < len(k) && s[hi] == k[ki]; ki++ {
					hi++
				}
				spans = append(spans, [2]int{lo, hi})
				from = p + 1
			}
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp[0] <= last[1] {
			last[1] = max(last[1], sp[1])
		} else {
			out = append(out, sp)
		}
	}
	return out
}

// redactString returns s with every secret run replaced, and its JSON
// escapes decoded first when the decoded form holds one.
func redactString(s string, secrets []string) string {
	if sp := secretSpans(s, secrets); len(sp) > 0 {
		s = replaceSpans(s, sp)
	}
	if strings.IndexByte(s, '\\') >= 0 {
		if d := unescapeJSON(s); d != s {
			if sp := secretSpans(d, secrets); len(sp) > 0 {
				// The escaped form hid a secret: keep the decoded text,
				// redacted. Its escapes are lost; a secret is not.
				s = replaceSpans(d, sp)
			}
		}
	}
	return s
}

func replaceSpans(s string, spans [][2]int) string {
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp[0]])
		b.WriteString(redacted)
		prev = sp[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

// unescapeJSON decodes the JSON string escapes in s (\uXXXX with
// surrogate pairs, \n, \" …) wherever they are, leaving everything else as
// it is: s is a body or a message, not one JSON string.
func unescapeJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
			i++
		case 'n', 't', 'r', 'b', 'f':
			b.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[e])
			i++
		case 'u':
			r, n := decodeU(s[i:])
			if n == 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteRune(r)
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// decodeU reads \uXXXX (and a following low surrogate) at the start of s.
func decodeU(s string) (rune, int) {
	hex := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex(s)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex(s[6:]); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return r, 6
}

// redactRecord removes the secrets from everything the server sent back.
// Some servers quote the key they were given ("Incorrect API key provided:
// sk-…") and an echo server streams it back, but a trace is made to be
// shared.
func redactRecord(rec *trace.Record, secrets []string) {
	if len(secrets) == 0 {
		return
	}
	for _, f := range []*string{&rec.Usage, &rec.Timings, &rec.FinishReason, &rec.Notes} {
		*f = redactString(*f, secrets)
	}
	if rec.Error != nil {
		rec.Error.Message = redactString(rec.Error.Message, secrets)
		rec.Error.Body = redactString(rec.Error.Body, secrets)
	}
	redactChunks(rec.Chunks, secrets, func(c *trace.Chunk) *string { return &c.Text })
	redactChunks(rec.Chunks, secrets, func(c *trace.Chunk) *string { return &c.Reasoning })
}

// redactScrape removes the secrets from what a server said in a scrape of
// its /metrics: metric names, label values (an API gateway labels its
// series by the caller's key) and the error. The sample strings are
// searched joined first, so a scrape without a secret (nearly all) costs
// one pass, not one per sample.
func redactScrape(sc *trace.Scrape, secrets []string) {
	if len(secrets) == 0 {
		return
	}
	sc.Target, sc.Error = redactString(sc.Target, secrets), redactString(sc.Error, secrets)
	var b strings.Builder
	for _, s := range sc.Samples {
		b.WriteString(s.Name)
		b.WriteByte(0)
		b.WriteString(s.Labels)
		b.WriteByte(0)
	}
	all := b.String()
	if len(secretSpans(all, secrets)) == 0 && (strings.IndexByte(all, '\\') < 0 || len(secretSpans(unescapeJSON(all), secrets)) == 0) {
		return
	}
	for i := range sc.Samples {
		s := &sc.Samples[i]
		s.Name, s.Labels = redactString(s.Name, secrets), redactString(s.Labels, secrets)
	}
}

// redactChunks searches the chunks' texts joined, so a secret split across
// chunks is found, and cuts each run out of the chunks it spans (the
// marker goes in the first). Chunk wire bytes are left as they were.
func redactChunks(chunks []trace.Chunk, secrets []string, field func(*trace.Chunk) *string) {
	n := 0
	for i := range chunks {
		n += len(*field(&chunks[i]))
	}
	if n < minFragment {
		return
	}
	var b strings.Builder
	b.Grow(n)
	for i := range chunks {
		b.WriteString(*field(&chunks[i]))
	}
	joined := b.String()
	spans := secretSpans(joined, secrets)
	if strings.IndexByte(joined, '\\') >= 0 {
		// A chunk's text is decoded JSON already; escapes left in it are
		// the model's own text, but a key spelled with them is still a key.
		if d := unescapeJSON(joined); d != joined && len(secretSpans(d, secrets)) > 0 {
			for i := range chunks {
				*field(&chunks[i]) = redactString(*field(&chunks[i]), secrets)
			}
		}
	}
	if len(spans) == 0 {
		return
	}
	off := 0
	for i := range chunks {
		t := field(&chunks[i])
		lo, hi := off, off+len(*t)
		off = hi
		var out strings.Builder
		prev := lo
		changed := false
		for _, sp := range spans {
			if sp[1] <= lo || sp[0] >= hi {
				continue
			}
			a, z := max(sp[0], lo), min(sp[1], hi)
			out.WriteString(joined[prev:a])
			if a == sp[0] { // the run starts in this chunk: the marker goes here
				out.WriteString(redacted)
			}
			prev = z
			changed = true
		}
		if changed {
			out.WriteString(joined[prev:hi])
			*t = out.String()
		}
	}
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

// scrub removes the key and the URL's query values from s: for what the
// server said outside a record (model discovery, --api auto's probes).
func (e *engine) scrub(s string) string { return redactString(s, e.secrets()) }

// secrets are the key and the URL's query values, each long enough to
// redact.
func (e *engine) secrets() []string {
	out := make([]string, 0, 1+len(e.querySecrets))
	if len(e.cfg.APIKey) >= minRedactKey {
		out = append(out, e.cfg.APIKey)
	}
	return append(out, e.querySecrets...)
}
