package endpoint

import (
	"encoding/json"
	"reflect"
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
		{"adds keys after the body's, sorted", `{"stream":true,"model":"m"}` + "\n", `{"top_k":20,"chat_template_kwargs":{ "enable_thinking" : false }}`,
			`{"stream":true,"model":"m","chat_template_kwargs":{"enable_thinking":false},"top_k":20}` + "\n", false},
		{"extends an object in place", `{"model":"m","options":{"num_predict":4,"temperature":0},"stream":true}`, `{"options":{"top_k":20}}`,
			`{"model":"m","options":{"num_predict":4,"temperature":0,"top_k":20},"stream":true}`, false},
		{"deep extension", `{"a":{"b":{"c":1}}}`, `{"a":{"b":{"d":"<x>&"}}}`, `{"a":{"b":{"c":1,"d":"<x>&"}}}`, false},
		{"numbers as given", `{"model":"m"}`, `{"seed":12345678901234567890,"p":1.50}`, `{"model":"m","p":1.50,"seed":12345678901234567890}`, false},
		{"strings with braces and escapes", `{"messages":[{"content":"}\"]{,"}],"x\"y":1}`, `{"z":"<&>"}`, `{"messages":[{"content":"}\"]{,"}],"x\"y":1,"z":"<&>"}`, false},
		{"an empty body", `{}`, `{"a":1}`, `{"a":1}`, false},
		{"an escaped key clashes", `{"str\u0065am":true}`, `{"stream":false}`, `"stream"`, true},
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

// The one-pass splice and the plain decode-and-encode merge agree on
// every body an encoder could make: the same object (order aside), or the
// same refusal.
func FuzzMergeBody(f *testing.F) {
	f.Add(`{"model":"m","options":{"n":1}}`, `{"options":{"k":2},"top_k":20}`)
	f.Add(`{"a":1}`, `{"a":{"b":1}}`)
	f.Add(`{}`, `null`)
	f.Add(`{"a":[1,2]}`, `{"a":[3]}`)
	f.Add(`{"m":[{"c":"}\"]"}],"o":{"n":1} }`+"\n", `{"o":{"k":2},"z":null}`)
	f.Add(`{"a":1,"a":2}`, `{"b":1}`)
	f.Fuzz(func(t *testing.T, body, extra string) {
		var b map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &b) != nil || b == nil {
			return // the builders always make an object
		}
		if strings.TrimSpace(extra) == "" {
			return // no extra body: the body goes as built (TestMergeBody)
		}
		got, err := MergeBody([]byte(body), []byte(extra))
		want, werr := mergeBodyDecoded([]byte(body), []byte(extra))
		if (err == nil) != (werr == nil) {
			// Duplicate keys: the decoder keeps the last, the splice defers
			// to the decoder; any other difference is a bug.
			t.Fatalf("MergeBody err %v, decoded merge err %v", err, werr)
		}
		if err != nil {
			return
		}
		var m, w any
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("merged body %q is not JSON: %v", got, err)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(m, w) {
			t.Fatalf("MergeBody = %s, decoded merge = %s", got, want)
		}
		// Nothing the builder sent is lost.
		for k := range b {
			if _, ok := m.(map[string]any)[k]; !ok {
				t.Fatalf("key %q lost: %s", k, got)
			}
		}
	})
}

// BenchmarkNewRequestExtraBody is what --extra-body adds to building one
// request (done before its send time, off the timing path).
func BenchmarkNewRequestExtraBody(b *testing.B) {
	ep, _ := Lookup("openai-chat")
	long := chatReq
	long.Messages = []workload.Message{{Role: "user", Content: strings.Repeat("count on, 1, 2, 3 ", 7000)}} // ~32k tokens, 126 KB
	qwen3 := json.RawMessage(`{"chat_template_kwargs":{"enable_thinking":false},"top_k":20}`)
	for _, c := range []struct {
		name  string
		req   *workload.Request
		extra json.RawMessage
	}{{"short/none", &chatReq, nil}, {"short/qwen3", &chatReq, qwen3}, {"32k/none", &long, nil}, {"32k/qwen3", &long, qwen3}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ep.NewRequest(b.Context(), "http://h", c.req, Options{Model: "m", ExtraBody: c.extra}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
