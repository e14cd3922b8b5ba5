package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

const (
	sseAccept    = "text/event-stream"
	ndjsonAccept = "application/x-ndjson"
)

// adapter is one API. Everything that differs between APIs is a field of
// it, so an API is a table and a few small functions; sending a request
// and reading its answer are the same code for all.
type adapter struct {
	name string
	// The request: the route joined to the base URL (path may hold
	// {model}, the model name escaped), the Accept header, whether a
	// model name is needed, which workload shapes it takes, and the body.
	prefix, path string
	accept       string
	needModel    bool
	input        input
	body         func(q *call) (object, error)
	// The response.
	reader
}

var _ Endpoint = (*adapter)(nil)

// Name implements Endpoint.
func (a *adapter) Name() string { return a.name }

// Read implements Endpoint.
func (a *adapter) Read(body io.Reader, now func() int64, rec *trace.Record) error {
	return read(&a.reader, body, now, rec)
}

// NewRequest implements Endpoint. A request the API cannot carry (a chat
// to a raw-prompt API, token ids to one that takes text) is refused with
// the API's own advice, before anything is sent.
func (a *adapter) NewRequest(ctx context.Context, base string, r *workload.Request, o Options) (*http.Request, error) {
	if a.needModel && o.Model == "" {
		return nil, errNoModel(a.name)
	}
	q := &call{r: r, o: o}
	if err := a.input.resolve(a.name, q); err != nil {
		return nil, err
	}
	b, err := a.body(q)
	if err != nil {
		return nil, err
	}
	path := strings.Replace(a.path, "{model}", url.PathEscape(o.Model), 1)
	return newJSONRequest(ctx, a.name, joinURL(base, a.prefix, path), b, q.size(), o, a.accept)
}

// size is about how long q's body is: its text and a few hundred bytes of
// the rest, so the body's buffer is made once.
func (q *call) size() int {
	n := 256 + len(q.r.Prompt) + 8*len(q.o.TokenIDs)
	for _, m := range q.r.Messages {
		n += 32 + len(m.Content)
	}
	return n
}

// call is one request being built: the workload's request, the run's
// options, and the prompt in the form the API takes.
type call struct {
	r        *workload.Request
	o        Options
	messages []workload.Message // chat APIs: the messages
	prompt   any                // raw-prompt APIs: the text, or the token ids
}

// shape is which workload requests an API can carry.
type shape uint8

const (
	// chatOrPrompt takes messages; a raw prompt is sent as one user
	// message. Token ids are not used.
	chatOrPrompt shape = iota
	// chatOnly takes messages only.
	chatOnly
	// rawOrIDs takes a raw prompt as text or, when the run sends them,
	// as token ids.
	rawOrIDs
	// rawText takes a raw prompt as text.
	rawText
)

// input is what an API takes from the workload.
type input struct {
	shape shape
	// instead is the advice for a request of the other shape: the API to
	// use for it ("" when there is none).
	instead string
	// idsField, for rawText, names the field that takes the text when
	// token ids are refused; "" leaves token ids unused.
	idsField string
	// needPrompt refuses an empty raw prompt.
	needPrompt bool
}

// resolve puts q's prompt in the form the API takes, or says why it
// cannot be sent.
func (in input) resolve(api string, q *call) error {
	r, o := q.r, q.o
	or := ""
	if in.instead != "" {
		or = ", or use " + in.instead
	}
	switch in.shape {
	case chatOrPrompt:
		q.messages = r.Messages
		if len(q.messages) == 0 {
			q.messages = []workload.Message{{Role: "user", Content: r.Prompt}}
		}
		return nil
	case chatOnly:
		if len(r.Messages) == 0 || o.TokenIDs != nil {
			return fmt.Errorf("%s has no raw-prompt mode but request %s is a completion (prompt or token ids): build the workload with the chat shape%s", api, r.ID, or)
		}
		q.messages = r.Messages
		return nil
	case rawOrIDs:
		if o.TokenIDs != nil {
			q.prompt = o.TokenIDs
			return nil
		}
	case rawText:
		if o.TokenIDs != nil && in.idsField != "" {
			return fmt.Errorf("%s takes %s, not token ids: leave out --send-token-ids", api, in.idsField)
		}
	}
	if len(r.Messages) > 0 {
		return fmt.Errorf("%s sends a raw prompt but request %s is a chat (messages): build the workload with the completion shape%s", api, r.ID, or)
	}
	if in.needPrompt && r.Prompt == "" {
		return fmt.Errorf("%s sends a raw prompt but request %s has none", api, r.ID)
	}
	q.prompt = r.Prompt
	return nil
}

// object is a request body: its members encoded in this order, each value
// as encoding/json encodes it (text without HTML escaping). One line per
// API says what it sends, where a struct type per API said the same in a
// dozen.
type object []pair

// pair is one member of an object.
type pair struct {
	key   string
	value any
	omit  bool // left out when empty, as a field tagged omitempty
}

// m is a member always sent; opt one left out when its value is empty
// (false, 0, "", a nil pointer, no elements).
func m(key string, v any) pair   { return pair{key: key, value: v} }
func opt(key string, v any) pair { return pair{key: key, value: v, omit: true} }

// encode writes o to b as JSON. It writes straight into the request's
// buffer rather than being a json.Marshaler, whose output encoding/json
// would scan and copy again (a 32k-token prompt twice); scalars, the most
// of a body, skip reflection.
func (o object) encode(b *bytes.Buffer, enc *json.Encoder) error {
	b.WriteByte('{')
	first := true
	for _, p := range o {
		if p.omit && empty(p.value) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteByte('"')
		b.WriteString(p.key) // keys are the APIs' own: plain ASCII
		b.WriteString(`":`)
		if err := encodeValue(b, enc, p.value); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// encodeValue writes v as encoding/json (without HTML escaping) would.
func encodeValue(b *bytes.Buffer, enc *json.Encoder, v any) error {
	var a [32]byte
	switch v := v.(type) {
	case object:
		return v.encode(b, enc)
	case bool:
		b.Write(strconv.AppendBool(a[:0], v))
		return nil
	case int:
		b.Write(strconv.AppendInt(a[:0], int64(v), 10))
		return nil
	case float64:
		// encoding/json's rule: 'f' format unless the exponent is very
		// small or large, then 'e' with a one-digit negative exponent.
		if abs := math.Abs(v); !math.IsInf(v, 0) && !math.IsNaN(v) && (abs == 0 || abs >= 1e-6 && abs < 1e21) {
			b.Write(strconv.AppendFloat(a[:0], v, 'f', -1, 64))
			return nil
		}
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

func empty(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
		return r.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return r.IsNil()
	default:
		return r.IsZero()
	}
}

// JoinURL appends an API path to base. A base that already ends in the
// API's version prefix (as OpenAI clients' base URLs do: http://host/v1) is
// not given it twice.
// A query string stays at the end (Azure-style ?api-version=…): the route
// goes into the path, not after the "?".
func JoinURL(base, prefix, path string) string {
	base, query, hasQuery := strings.Cut(base, "?")
	base = strings.TrimRight(base, "/")
	if !strings.HasSuffix(base, prefix) {
		base += prefix
	}
	if hasQuery {
		return base + path + "?" + query
	}
	return base + path
}

// joinURL is JoinURL.
func joinURL(base, prefix, path string) string { return JoinURL(base, prefix, path) }

// newJSONRequest builds a POST with body b encoded as JSON, with
// Options.ExtraBody merged in (MergeBody), and the API key in the header
// the API takes (AuthHeaders), only when there is one.
func newJSONRequest(ctx context.Context, api, u string, b object, size int, o Options, accept string) (*http.Request, error) {
	var buf bytes.Buffer
	buf.Grow(size)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts go as written, not with <>& escaped
	if err := b.encode(&buf, enc); err != nil {
		return nil, fmt.Errorf("encoding the request body: %v", err)
	}
	buf.WriteByte('\n')
	body := buf.Bytes()
	if len(o.ExtraBody) > 0 {
		var err error
		if body, err = MergeBody(body, o.ExtraBody); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		// The URL carries no key, so the error can be shown as it is.
		return nil, fielderr.New("replay: Config", "URL", fmt.Sprintf("makes no request (%v)", err), "check the address")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "llmreplay/"+version.Tool)
	AuthHeaders(api, req.Header, o.APIKey)
	return req, nil
}

func errNoModel(api string) error {
	return fielderr.New("replay: Config", "Model", fmt.Sprintf("is needed by %s", api), "give the model name")
}
