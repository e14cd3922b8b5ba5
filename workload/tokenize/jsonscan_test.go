package tokenize

import (
	"encoding/json"
	"maps"
	"testing"
	"unicode/utf8"
)

// FuzzJSONScan checks the hand-written scanner against encoding/json: it
// accepts exactly the valid JSON objects, and reads a vocabulary the same.
func FuzzJSONScan(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b\u0120c": 2, "\ud83d\ude00": 3, "esc\"\\\/\b\f\n\r\t": 4}`,
		`{"model": {"vocab": {"x": 0}, "merges": ["a b", ["c", "d"]]}, "n": null, "t": [true, false, -1.5e+3, 0]}`,
		`{"a": 01}`, `{"a": 1.}`, `{"a": "\ud800"}`, `{"a" 1}`, `{}`, `[]`, `{"a": [1, 2,]}`, `{"a": "x"} x`, `null`, ` {"a":{}} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]json.RawMessage
		stdErr := json.Unmarshal(data, &v)
		if stdErr == nil && v == nil {
			return // "null": fine for a map, not a tokenizer.json
		}
		_, err := objectSpans(data)
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("objectSpans err %v, encoding/json err %v", err, stdErr)
		}
		if !utf8.Valid(data) {
			return // encoding/json replaces bad UTF-8 in strings; we keep it
		}
		var want map[string]int
		stdErr = json.Unmarshal(data, &want)
		got, err := parseVocab(data)
		if stdErr != nil {
			return // we may accept more (data after the object is the caller's check)
		}
		if err != nil || !maps.Equal(got, want) {
			t.Fatalf("parseVocab = %v, %v; encoding/json %v", got, err, want)
		}
	})
}
