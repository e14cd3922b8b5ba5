package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/workload"
)

// What a run adds to what the API builders send: Config.Headers and
// Config.ExtraBody. They are checked once (Resolve), sent with every
// request (the client's transport, endpoint.MergeBody), recorded in the
// trace header with their secrets redacted, and their secret values are
// scrubbed from what the server sends back like the API key.

// ownedHeaders are the headers llmreplay must control for its timing to
// mean anything (the body's format, uncompressed streaming, one
// connection per stream): a --header setting one is refused. Authorization,
// x-api-key, anthropic-version and User-Agent are not here: a header given
// on the command line is clearly meant, so it replaces llmreplay's own.
var ownedHeaders = map[string]string{
	"Content-Type":      "the body is JSON",
	"Content-Length":    "set from the body",
	"Content-Encoding":  "the body is sent as it is",
	"Accept":            "the API's stream format",
	"Accept-Encoding":   "a compressed stream would hide each chunk's arrival",
	"Host":              "the host of --url",
	"Transfer-Encoding": "set by the HTTP client",
	"Connection":        "connections are reused, one per stream",
	"Keep-Alive":        "connections are reused, one per stream",
	"Te":                "set by the HTTP client",
	"Trailer":           "set by the HTTP client",
	"Upgrade":           "streams are plain HTTP/1.1",
	"Expect":            "set by the HTTP client",
}

// maxExtraBody bounds --extra-body: it is merged into every request and
// recorded in the trace header.
const maxExtraBody = 64 << 10

// checkHeaders validates and canonicalizes c.Headers.
func checkHeaders(h http.Header) (http.Header, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := http.Header{}
	for name, vs := range h {
		if !validHeaderName(name) {
			return nil, fieldErr("Headers", fmt.Sprintf("name %q is not a valid HTTP header name", name), `write it as NAME:VALUE, e.g. --header "X-Request-Priority: 1"`)
		}
		canon := http.CanonicalHeaderKey(name)
		if why, ok := ownedHeaders[canon]; ok {
			return nil, fieldErr("Headers", fmt.Sprintf("%s is llmreplay's to set (%s)", canon, why), "drop it")
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fieldErr("Headers", fmt.Sprintf("%s has a line break or NUL in its value", canon), "give a one-line value")
			}
			out.Add(canon, strings.TrimSpace(v))
		}
	}
	return out, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// checkExtraBody validates c.ExtraBody as a JSON object and, by building
// the workload's first request with it, that it sets no field the API
// builder sends itself: a clash is refused at start, not on every request.
func checkExtraBody(raw json.RawMessage, ep endpoint.Endpoint, base string, wl *workload.Workload, model string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw) > maxExtraBody {
		return nil, fieldErr("ExtraBody", fmt.Sprintf("is %d bytes", len(raw)), fmt.Sprintf("keep it under %d KiB", maxExtraBody>>10))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		problem := "is not a JSON object"
		if err != nil {
			problem = fmt.Sprintf("is not a JSON object (%s)", jsonProblem(raw, err))
		}
		return nil, fieldErr("ExtraBody", problem, `give one like '{"chat_template_kwargs":{"enable_thinking":false}}' (single quotes around it in the shell)`)
	}
	if ep == nil {
		// --api auto: the API is known only once the server answered; the
		// run's check of its first request refuses a clash then, before
		// anything is sent.
		return raw, nil
	}
	if model == "" {
		model = "model" // not known before discovery; only the keys matter here
	}
	first := wl.Requests[0]
	_, err := ep.NewRequest(context.Background(), base, &first, endpoint.Options{Model: model, ExtraBody: raw})
	if fe := fielderr.As(err); fe != nil && fe.Field == "ExtraBody" {
		return nil, err
	}
	// Other refusals (a chat workload to a raw-prompt API) are the run's
	// to report, as they are without an extra body.
	return raw, nil
}

// jsonProblem is a JSON syntax error in a user's words, without Go's type
// names.
func jsonProblem(raw []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// encoding/json's words ("invalid character 'b' looking for
		// beginning of object key string") describe its parser; the user
		// needs where the text stops being JSON.
		at := min(max(int(se.Offset), 1), len(raw))
		if at >= len(raw) && strings.Contains(se.Error(), "unexpected end") {
			return fmt.Sprintf("it ends before the JSON does, after %q: a closing } or \" is missing", clipJSON(raw))
		}
		return fmt.Sprintf("it stops being JSON at byte %d: %q", at, clipJSON(raw[:at]))
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "it is a JSON " + te.Value + ", not an object"
	}
	return err.Error()
}

// clipJSON is the last 40 bytes of b, for an error message.
func clipJSON(b []byte) string {
	if len(b) > 40 {
		return "…" + string(b[len(b)-40:])
	}
	return string(b)
}

// headerTransport sends headers with every request after the request's own
// ones, so a header the user gave replaces llmreplay's (Authorization).
// Requests are cloned, not changed: a RoundTripper must not modify them.
type headerTransport struct {
	rt      http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.rt.RoundTrip(r)
}

// withHeaders wraps rt when there are headers to send.
func withHeaders(rt http.RoundTripper, h http.Header) http.RoundTripper {
	if len(h) == 0 {
		return rt
	}
	return &headerTransport{rt: rt, headers: h}
}

// secretName reports whether a header name or a JSON key names a secret:
// one of its words (split at punctuation and case changes) is key, token,
// secret, password, auth…, so "x-api-key", "X-Auth-Token", "Authorization"
// and "access_token" are secrets and "max_tokens" or "top_k" are not.
func secretName(name string) bool {
	for _, w := range nameWords(name) {
		switch w {
		case "key", "apikey", "token", "secret", "password", "passwd", "pwd", "auth", "authorization",
			"cookie", "credential", "credentials", "signature", "sig", "bearer", "jwt", "pat":
			return true
		}
	}
	return false
}

func nameWords(s string) []string {
	var words []string
	var cur []rune
	prevLower := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return words
}

// secretValue reports whether a value carries a credential whatever its
// header's name: an Authorization-style scheme.
func secretValue(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	for _, p := range []string{"bearer ", "basic ", "token ", "digest "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// RedactHeaders returns the headers as the trace header records them: one
// value per name (several joined by ", "), a value under a secret-looking
// name or with an Authorization scheme replaced by REDACTED, and any run
// of one of secrets (the API key, the URL's query values) cut out of the
// others, whatever the header is called.
func RedactHeaders(h http.Header, secrets ...string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		if secretName(k) || secretValue(v) {
			v = "REDACTED"
		}
		out[k] = redactString(v, secrets)
	}
	return out
}

// headerSecrets are the secret header values to scrub from what the server
// sends back (an echo, an error quoting the request), with a scheme's
// credential also on its own.
func headerSecrets(h http.Header) []string {
	var out []string
	for k, vs := range h {
		for _, v := range vs {
			if !secretName(k) && !secretValue(v) {
				continue
			}
			if len(v) >= minRedactKey {
				out = append(out, v)
			}
			if _, cred, ok := strings.Cut(v, " "); ok && len(strings.TrimSpace(cred)) >= minRedactKey {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) }) // the whole value before its part
	return out
}

// RedactBody returns an extra body as the trace header records it: every
// value under a key that names a secret (api_key, access_token …) replaced
// by "REDACTED", at any depth; and any run of one of secrets (the API key,
// the URL's query values) cut out of every other string and key, whatever
// the field is called: {"user": KEY} is as secret as {"api_key": KEY}.
func RedactBody(raw json.RawMessage, secrets ...string) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers are recorded as they were given
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactValue(v, secrets)); err != nil {
		return nil
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
}

func redactValue(v any, secrets []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretName(k) {
				x[k] = "REDACTED"
			} else {
				x[k] = redactValue(e, secrets)
			}
			if rk := redactString(k, secrets); rk != k {
				x[rk] = x[k]
				delete(x, k)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(e, secrets)
		}
	case string:
		if secretValue(x) {
			return "REDACTED"
		}
		return redactString(x, secrets)
	}
	return v
}

// SecretHeader reports whether a header carries a credential by its name
// or its value, as RedactHeaders decides: a command that writes its
// settings into a file (kube job) refuses one.
func SecretHeader(name, value string) bool { return secretName(name) || secretValue(value) }

// SecretQuery reports whether a URL query parameter carries a credential
// by its name (api_key, access_token, sig …) or its value (a bearer
// scheme), by the rule SecretHeader uses. The trace redacts every query
// value anyway; a command that writes the URL into a file (kube job)
// refuses these.
func SecretQuery(name, value string) bool { return secretName(name) || secretValue(value) }

// BodyHasSecret reports whether an extra body holds a value RedactBody
// would hide.
func BodyHasSecret(raw json.RawMessage) bool { return len(bodySecretsMin(raw, 1)) > 0 }

// bodySecrets are the string values RedactBody hides, to scrub from what
// the server sends back.
func bodySecrets(raw json.RawMessage) []string { return bodySecretsMin(raw, minRedactKey) }

func bodySecretsMin(raw json.RawMessage, minLen int) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, secret || secretName(k))
			}
		case []any:
			for _, e := range x {
				walk(e, secret)
			}
		case string:
			if (secret || secretValue(x)) && len(x) >= minLen {
				out = append(out, x)
			}
		}
	}
	walk(v, false)
	return out
}
