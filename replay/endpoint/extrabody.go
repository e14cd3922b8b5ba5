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
// The merged object is written with its keys sorted; a body without
// extra is returned unchanged. The error is a fielderr for the
// ExtraBody field, naming the path of the refused key.
func MergeBody(body, extra []byte) ([]byte, error) {
	if len(bytes.TrimSpace(extra)) == 0 {
		return body, nil
	}
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
		var bo, ao map[string]json.RawMessage
		if isObject(old) && isObject(v) && json.Unmarshal(old, &bo) == nil && json.Unmarshal(v, &ao) == nil {
			m, err := mergeObjects(bo, ao, path+k+".")
			if err != nil {
				return nil, err
			}
			enc, err := encodeObject(m)
			if err != nil {
				return nil, err
			}
			base[k] = enc
			continue
		}
		return nil, errExtraBody(fmt.Sprintf("sets %q, which llmreplay sends itself (%s)", path+k, compactValue(old)),
			"drop it from --extra-body; what the workload sets (max tokens, temperature, ignore_eos, the prompt) is changed by building the workload, the model by --model")
	}
	return base, nil
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

func encodeObject(m map[string]json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // prompts go as written, not with <>& escaped
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the request body: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func errExtraBody(problem, fix string) error {
	return fielderr.New("replay: Config", "ExtraBody", problem, fix)
}
