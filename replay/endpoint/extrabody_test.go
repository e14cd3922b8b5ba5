package endpoint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/workload"
)

func TestMergeBody(t *testing.T) {
	for _, c := range []struct {
		name, body, extra string
		want              string // the merged body, or the refused key's error text
		refused           bool
	}{
		{"nothing to add", `{"model":"m","stream":true}`, ``, `{"model":"m","stream":true}`, false},
		{"adds keys, sorted", `{"stream":true,"model":"m"}`, `{"top_k":20,"chat_template_kwargs":{"enable_thinking":false}}`,
			`{"chat_template_kwargs":{"enable_thinking":false},"model":"m","stream":true,"top_k":20}`, false},
		{"extends an object", `{"options":{"num_predict":4,"temperature":0}}`, `{"options":{"top_k":20}}`,
			`{"options":{"num_predict":4,"temperature":0,"top_k":20}}`, false},
		{"deep extension", `{"a":{"b":{"c":1}}}`, `{"a":{"b":{"d":"<x>&"}}}`, `{"a":{"b":{"c":1,"d":"<x>&"}}}`, false},
		{"numbers as given", `{"model":"m"}`, `{"seed":12345678901234567890,"p":1.50}`, `{"model":"m","p":1.50,"seed":12345678901234567890}`, false},
		{"scalar owned", `{"stream":true}`, `{"stream":false}`, `"stream"`, true},
		{"scalar over object", `{"stream_options":{"include_usage":true}}`, `{"stream_options":1}`, `"stream_options"`, true},
		{"nested owned", `{"options":{"num_predict":4}}`, `{"options":{"num_predict":8}}`, `"options.num_predict"`, true},
		{"not an object", `{"model":"m"}`, `[1]`, `is not a JSON object`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := MergeBody([]byte(c.body), []byte(c.extra))
			if c.refused {
				fe := fielderr.As(err)
				if fe == nil || fe.Field != "ExtraBody" || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want an ExtraBody error with %s", err, c.want)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("MergeBody = %s, %v; want %s", got, err, c.want)
			}
		})
	}
}

// Every API's builder merges the extra body through newJSONRequest.
func TestExtraBodyInEveryBuilder(t *testing.T) {
	for _, name := range Names {
		ep, _ := Lookup(name)
		built := 0
		for _, r := range []workload.Request{chatReq, promptReq} {
			req, err := ep.NewRequest(t.Context(), "http://h", &r, Options{Model: "m", ExtraBody: json.RawMessage(`{"x_extra":{"k":1}}`)})
			if err != nil {
				continue // this API does not take this shape
			}
			var body map[string]any
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if x, _ := body["x_extra"].(map[string]any); x == nil || x["k"] != float64(1) {
				t.Errorf("%s: extra body not merged: %v", name, body)
			}
			built++
		}
		if built == 0 {
			t.Errorf("%s took neither a chat nor a prompt request", name)
		}
	}
}

func FuzzMergeBody(f *testing.F) {
	f.Add(`{"model":"m","options":{"n":1}}`, `{"options":{"k":2},"top_k":20}`)
	f.Add(`{"a":1}`, `{"a":{"b":1}}`)
	f.Add(`{}`, `null`)
	f.Add(`{"a":[1,2]}`, `{"a":[3]}`)
	f.Fuzz(func(t *testing.T, body, extra string) {
		var b map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &b) != nil || b == nil {
			return // the builders always make an object
		}
		got, err := MergeBody([]byte(body), []byte(extra))
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("merged body %q is not an object: %v", got, err)
		}
		// Nothing the builder sent is lost.
		for k := range b {
			if _, ok := m[k]; !ok {
				t.Fatalf("key %q lost: %s", k, got)
			}
		}
	})
}
