package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
)

// scalingResult: label q at concurrency 1, two requests at each input
// length, TTFT 0.001 ms · L² (10 ms at 100 tokens, 1,000 ms at 1,000):
// ttft ∝ L² exactly, so k = 2 with interval [2, 2] (no scatter), and
// prefill_tps = L / TTFT ∝ L^−1.
func scalingResult(t *testing.T, inputs ...int) *analyze.Result {
	t.Helper()
	ms := int64(1_000_000)
	h := trace.Header{Format: trace.FormatName, Major: 1, Label: "q", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m"}
	var recs []trace.Record
	at := int64(0)
	for i, in := range inputs {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("in%d", in), Kind: "burst", Concurrency: 1, InputTokens: in, MaxTokens: 3, Requests: 2})
		ttft := int64(in) * int64(in) * ms / 1000
		for j := 0; j < 2; j++ {
			recs = append(recs, trace.Record{ID: fmt.Sprint(i, j), Phase: i, InputTokens: in, MaxTokens: 3, Scheduled: at, Sent: at, Done: at + ttft + 30*ms, Status: 200,
				Chunks: []trace.Chunk{{T: at + ttft, Text: "1", Tokens: 1}, {T: at + ttft + 10*ms, Text: ",", Tokens: 1}, {T: at + ttft + 20*ms, Text: " 2", Tokens: 1}}})
			at += ttft + time1s
		}
	}
	a, err := analyze.New(analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tracetest.AddAll(a.Trace("", "", h), recs)
	return a.Result()
}

const time1s = int64(1_000_000_000)

// The prefill-scaling footnote under the sweep table and the metric table,
// with the exponents worked out above; none with one input length, and
// none in CSV, which stays one value per column.
func TestScalingNotes(t *testing.T) {
	want := "prefill scaling, q at concurrency 1, input 100–1,000 tokens (4 requests): TTFT ∝ input^2.00 [2.00, 2.00]; prefill tok/s ∝ input^-1.00 [-1.00, -1.00]"
	res := scalingResult(t, 100, 1000)
	for _, o := range []TableOptions{{}, {By: []string{analyze.KeyInputTokens}}} {
		text := rendered(t, res, o, RenderText)
		if !strings.Contains(text, want+"\n") || !strings.Contains(text, "prefill scaling: the exponent k of a least-squares fit") {
			t.Errorf("%+v: the table lacks the scaling footnote:\n%s", o, text)
		}
		if strings.Contains(text, "steepest") {
			t.Errorf("two lengths: no window narrower than the sweep, so no steepest:\n%s", text)
		}
	}
	tab, _ := BuildTable(res, TableOptions{By: []string{analyze.KeyInputTokens}, Metrics: []string{"ttft_p50"}, Raw: true})
	var b bytes.Buffer
	if err := RenderCSV(&b, tab); err != nil || strings.Contains(b.String(), "prefill scaling") {
		t.Errorf("CSV: %v\n%s", err, b.String())
	}
	tab, _ = BuildTable(scalingResult(t, 100), TableOptions{})
	b.Reset()
	if err := RenderText(&b, tab); err != nil || strings.Contains(b.String(), "prefill scaling") {
		t.Errorf("one input length: %v\n%s", err, b.String())
	}
}
