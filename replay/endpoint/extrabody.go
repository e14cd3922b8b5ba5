package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// MergeBody merges extra, a JSON object, into body, the JSON object an API
// builder made. A key the body does not have is added; a key both have is
// merged when both values are objects (so {"options":{"top_k":20}} adds to
// Ollama's options, {"stream_options":{…}} to OpenAI's), and refused
// otherwise: the fields llmreplay sends itself (model, stream, max_tokens,
// the prompt, temperature, ignore_eos …) come from one owner each — the
// workload or a flag — and an extra body silently overriding one would
// make the trace say one thing and the server do another.
//
// The body keeps its members in order, a merged object's value is
// rewritten in place, and the added keys follow, sorted. A body without
// extra is returned unchanged. The error is a fielderr for the ExtraBody
// field, naming the path of the refused key.
//
// The body is not decoded: one pass finds its top-level members and the
// extra is spliced in, because the body holds the whole prompt, and
// decoding and re-encoding a 32k-token prompt with encoding/json cost
// 1.3 ms per request against 0.1 ms to build it
// (BenchmarkNewRequestExtraBody); mergeBodyDecoded, the plain way, is the
// reference the fuzz test holds it to, and the fallback for a body the
// scanner does not read.
func MergeBody(body, extra []byte) ([]byte, error) {
	if len(bytes.TrimSpace(extra)) == 0 {
		return body, nil
	}
	var add map[string]json.RawMessage
	if err := json.Unmarshal(extra, &add); err != nil || add == nil {
		return nil, errExtraBody("is not a JSON object", `give one like '{"top_k":20}'`)
	}
	members, closing, ok := topLevel(body)
	if !ok {
		return mergeBodyDecoded(body, extra)
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first refused key is the same every run
	at := make(map[string]int, len(members))
	for i, m := range members {
		at[m.key] = i
	}
	replace := map[int][]byte{}
	var added bytes.Buffer
	for _, k := range keys {
		v := add[k]
		i, found := at[k]
		if !found {
			if len(members) > 0 || added.Len() > 0 {
				added.WriteByte(',')
			}
			kb, err := encodeObject(k)
			if err != nil {
				return nil, err
			}
			added.Write(kb)
			added.WriteByte(':')
			if err := json.Compact(&added, v); err != nil {
				return nil, errExtraBody("is not a JSON object", `give one like '{"top_k":20}'`)
			}
			continue
		}
		old := body[members[i].start:members[i].end]
		enc, err := mergeValues(old, v, k)
		if err != nil {
			return nil, err
		}
		replace[i] = enc
	}
	out := make([]byte, 0, len(body)+added.Len()+64)
	pos := 0
	for i, m := range members {
		if r, ok := replace[i]; ok {
			out = append(out, body[pos:m.start]...)
			out = append(out, r...)
			pos = m.end
		}
	}
	out = append(out, body[pos:closing]...)
	out = append(out, added.Bytes()...)
	out = append(out, body[closing:]...)
	return out, nil
}

// mergeBodyDecoded is MergeBody by decoding both objects and encoding the
// merge, keys sorted.
func mergeBodyDecoded(body, extra []byte) ([]byte, error) {
	var base, add map[string]json.RawMessage
	if err := json.Unmarshal(body, &base); err != nil {
		return nil, fmt.Errorf("the request body is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(extra, &add); err != nil || add == nil {
		return nil, errExtraBody("is not a JSON object", `give one like '{"top_k":20}'`)
	}
	merged, err := mergeObjects(base, add, "")
	if err != nil {
		return nil, err
	}
	return encodeObject(merged)
}

// member is a top-level member of a JSON object: its key and where its
// value lies in the object's bytes.
type member struct {
	key        string
	start, end int
}

// topLevel finds the members of the JSON object b in one pass without
// decoding their values, and the index of its closing brace. ok is false
// for anything but one well-formed object (with at most whitespace
// after it) whose keys are unique; values are checked only for their
// extent, which is enough since an API builder encoded them.
func topLevel(b []byte) (members []member, closing int, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, 0, false
	}
	i = skipSpace(b, i+1)
	seen := map[string]bool{}
	if i < len(b) && b[i] == '}' {
		closing = i
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, 0, false
			}
			ke := skipString(b, i)
			if ke < 0 {
				return nil, 0, false
			}
			var key string
			if err := json.Unmarshal(b[i:ke], &key); err != nil || seen[key] {
				return nil, 0, false
			}
			seen[key] = true
			i = skipSpace(b, ke)
			if i >= len(b) || b[i] != ':' {
				return nil, 0, false
			}
			vs := skipSpace(b, i+1)
			ve := skipValue(b, vs)
			if ve < 0 {
				return nil, 0, false
			}
			members = append(members, member{key: key, start: vs, end: ve})
			i = skipSpace(b, ve)
			if i >= len(b) {
				return nil, 0, false
			}
			if b[i] == '}' {
				closing = i
				break
			}
			if b[i] != ',' {
				return nil, 0, false
			}
			i = skipSpace(b, i+1)
		}
	}
	if skipSpace(b, closing+1) != len(b) {
		return nil, 0, false
	}
	return members, closing, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		// IndexAny jumps over the prompt's text in large steps.
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return -1
		}
		j += k
		if b[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j)
				if j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

func mergeObjects(base, add map[string]json.RawMessage, path string) (map[string]json.RawMessage, error) {
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first refused key is the same every run
	for _, k := range keys {
		v := add[k]
		old, ok := base[k]
		if !ok {
			base[k] = v
			continue
		}
		enc, err := mergeValues(old, v, path+k)
		if err != nil {
			return nil, err
		}
		base[k] = enc
	}
	return base, nil
}

// mergeValues merges add into the value old that a body already has at
// path: two objects are merged member by member, anything else clashes.
func mergeValues(old, add json.RawMessage, path string) (json.RawMessage, error) {
	var bo, ao map[string]json.RawMessage
	if !isObject(old) || !isObject(add) || json.Unmarshal(old, &bo) != nil || json.Unmarshal(add, &ao) != nil {
		return nil, errClash(path, old)
	}
	m, err := mergeObjects(bo, ao, path+".")
	if err != nil {
		return nil, err
	}
	return encodeObject(m)
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// compactValue shows a value the body already has, short: the error
// message names what would have been overridden.
func compactValue(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	if len(s) > 40 {
		s = s[:37] + "…"
	}
	return "as " + s
}

func encodeObject(m any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts go as written, not with <>& escaped
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the request body: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// errClash refuses an extra body's key the API builder sends itself.
func errClash(path string, old json.RawMessage) error {
	return errExtraBody(fmt.Sprintf("sets %q, which llmreplay sends itself (%s)", path, compactValue(old)),
		"drop it from --extra-body; what the workload sets (max tokens, temperature, ignore_eos, the prompt) is changed by building the workload, the model by --model")
}

func errExtraBody(problem, fix string) error {
	return fielderr.New("replay: Config", "ExtraBody", problem, fix)
}
