package endpoint

import (
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/llmreplay/llmreplay/trace"

	"github.com/llmreplay/llmreplay/internal/cputime"
)

// eventsReader delivers a response one event per Read, the way a streaming
// server's flushes arrive, and can be rewound for the next request.
type eventsReader struct {
	events [][]byte
	i      int
}

func (r *eventsReader) Read(p []byte) (int, error) {
	if r.i == len(r.events) {
		return 0, io.EOF
	}
	n := copy(p, r.events[r.i])
	r.i++
	return n, nil
}

// vLLM chat chunks as vLLM 0.x sends them: ~200 bytes carrying one token.
func vllmResponse(tokens int, continuous bool) [][]byte {
	const head = `{"id":"chatcmpl-8d0f6c5e2b7a4a1f9d3c2b1a0e9f8d7c","object":"chat.completion.chunk","created":1733140000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{`
	usage := func(n int) string {
		if !continuous {
			return ""
		}
		return `,"usage":{"prompt_tokens":812,"total_tokens":` + strconv.Itoa(812+n) + `,"completion_tokens":` + strconv.Itoa(n) + `}`
	}
	ev := func(s string) []byte { return []byte("data: " + s + "\n\n") }
	out := [][]byte{ev(head + `"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]` + usage(0) + `}`)}
	for i := 1; i <= tokens; i++ {
		out = append(out, ev(head+`"content":" `+strconv.Itoa(i)+`,"},"logprobs":null,"finish_reason":null}]`+usage(i)+`}`))
	}
	out = append(out, ev(head+`},"logprobs":null,"finish_reason":"length","stop_reason":null}]`+usage(tokens)+`}`))
	out = append(out, ev(`{"id":"chatcmpl-8d0f6c5e2b7a4a1f9d3c2b1a0e9f8d7c","object":"chat.completion.chunk","created":1733140000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":812,"total_tokens":`+strconv.Itoa(812+tokens)+`,"completion_tokens":`+strconv.Itoa(tokens)+`}}`))
	return append(out, []byte("data: [DONE]\n\n"))
}

func benchRead(b *testing.B, ep Endpoint, events [][]byte) {
	r := &eventsReader{events: events}
	var clock int64
	now := func() int64 { clock++; return clock }
	size := 0
	for _, e := range events {
		size += len(e)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cputime.Process()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.i = 0
		rec := &trace.Record{MaxTokens: len(events)}
		if err := ep.Read(r, now, rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	runtime.ReadMemStats(&m1)
	n := float64(b.N) * float64(len(events))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/event")
	}
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/event")
}

// BenchmarkOpenAIChatRead reads 256-token vLLM chat responses, one event
// per read, through the whole adapter: parse, time, record.
func BenchmarkOpenAIChatRead(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchRead(b, openAIChat, vllmResponse(256, false)) })
	b.Run("continuous-usage", func(b *testing.B) { benchRead(b, openAIChat, vllmResponse(256, true)) })
}

func BenchmarkOllamaChatRead(b *testing.B) {
	var events [][]byte
	for i := 0; i < 256; i++ {
		events = append(events, []byte(ollamaChatLine(" "+strconv.Itoa(i)+",")))
	}
	events = append(events, []byte(`{"model":"m","message":{"role":"assistant","content":""},`+ollamaDone))
	benchRead(b, ollamaChat, events)
}

// anthropicResponse is a 256-token Messages stream as Anthropic sends it
// (spacing of its documentation's examples), one event per read.
func anthropicResponse(tokens int) [][]byte {
	ev := func(name, data string) []byte { return []byte("event: " + name + "\ndata: " + data + "\n\n") }
	out := [][]byte{
		ev("message_start", `{"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 812, "output_tokens": 1}}}`),
		ev("content_block_start", `{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}`),
		ev("ping", `{"type": "ping"}`),
	}
	for i := 1; i <= tokens; i++ {
		out = append(out, ev("content_block_delta", `{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " `+strconv.Itoa(i)+`,"}}`))
	}
	return append(out,
		ev("content_block_stop", `{"type": "content_block_stop", "index": 0}`),
		ev("message_delta", `{"type": "message_delta", "delta": {"stop_reason": "max_tokens", "stop_sequence": null}, "usage": {"output_tokens": `+strconv.Itoa(tokens)+`}}`),
		ev("message_stop", `{"type": "message_stop"}`))
}

// BenchmarkAnthropicRead reads 256-token Messages streams as
// BenchmarkOpenAIChatRead reads vLLM's.
func BenchmarkAnthropicRead(b *testing.B) { benchRead(b, anthropic, anthropicResponse(256)) }

// responsesResponse is a 256-token Responses stream as OpenAI sends it.
func responsesResponse(tokens int) [][]byte {
	ev := func(name, data string) []byte { return []byte("event: " + name + "\ndata: " + data + "\n\n") }
	const resp = `"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"in_progress","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[],"usage":null}`
	out := [][]byte{ev("response.created", `{"type":"response.created","sequence_number":0,`+resp+`}`)}
	for i := 1; i <= tokens; i++ {
		out = append(out, ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":`+strconv.Itoa(i)+`,"item_id":"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654","output_index":0,"content_index":0,"delta":" `+strconv.Itoa(i)+`,"}`))
	}
	return append(out, ev("response.completed", `{"type":"response.completed","sequence_number":999,"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":812,"output_tokens":`+strconv.Itoa(tokens)+`,"total_tokens":`+strconv.Itoa(812+tokens)+`}}}`))
}

// BenchmarkOpenAIResponsesRead reads 256-token Responses streams.
func BenchmarkOpenAIResponsesRead(b *testing.B) {
	benchRead(b, openAIResponses, responsesResponse(256))
}

// BenchmarkTGIRead reads 256-token /generate_stream responses.
func BenchmarkTGIRead(b *testing.B) {
	var events [][]byte
	for i := 1; i < 256; i++ {
		events = append(events, []byte(`data:{"index":`+strconv.Itoa(i)+`,"token":{"id":`+strconv.Itoa(1000+i)+`,"text":" `+strconv.Itoa(i)+`,","logprob":-0.0123,"special":false},"generated_text":null,"details":null}`+"\n\n"))
	}
	events = append(events, []byte(`data:{"index":256,"token":{"id":2,"text":" 256,","logprob":-0.0123,"special":false},"generated_text":"…","details":{"finish_reason":"length","generated_tokens":256,"input_length":812,"seed":null}}`+"\n\n"))
	benchRead(b, tgi, events)
}

// BenchmarkSGLangRead reads 256-token /generate streams; the text is
// cumulative, so each event is longer than the last (the delta is taken
// without copying the text so far more than once).
func BenchmarkSGLangRead(b *testing.B) {
	var events [][]byte
	text := ""
	for i := 1; i <= 256; i++ {
		text += " " + strconv.Itoa(i) + ","
		fin := "null"
		if i == 256 {
			fin = `{"type":"length","length":256}`
		}
		events = append(events, []byte(`data: {"text":"`+text+`","meta_info":{"id":"a9d8f3b2c1","finish_reason":`+fin+`,"prompt_tokens":812,"completion_tokens":`+strconv.Itoa(i)+`,"cached_tokens":0},"index":0}`+"\n\n"))
	}
	events = append(events, []byte("data: [DONE]\n\n"))
	benchRead(b, sglang, events)
}

// BenchmarkTRTLLMRead reads 256-token Triton generate_stream responses.
func BenchmarkTRTLLMRead(b *testing.B) {
	var events [][]byte
	for i := 1; i <= 256; i++ {
		events = append(events, []byte(`data: {"model_name":"ensemble","model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":" `+strconv.Itoa(i)+`,"}`+"\n\n"))
	}
	benchRead(b, trtllm, events)
}

// TestChunkPathAllocs holds the chunk path to its allocations, counted,
// not timed: reading a 256-token vLLM chat response allocates a few
// objects per response (the chunk slice made once from max_tokens, one
// string holding every chunk's text) and none per chunk. Client CPU per
// token (selftest section 1) depends on this staying so.
func TestChunkPathAllocs(t *testing.T) {
	for _, continuous := range []bool{false, true} {
		events := vllmResponse(256, continuous)
		r := &eventsReader{events: events}
		var clock int64
		now := func() int64 { clock++; return clock }
		n := testing.AllocsPerRun(20, func() {
			r.i = 0
			rec := &trace.Record{MaxTokens: 256}
			if err := (openAIChat).Read(r, now, rec); err != nil {
				t.Fatal(err)
			}
			if len(rec.Chunks) < 256 {
				t.Fatalf("%d chunks, want 256 or more", len(rec.Chunks))
			}
		})
		t.Logf("continuous usage %v: %.0f allocations per 256-token response", continuous, n)
		if n > 16 {
			t.Errorf("continuous usage %v: %.0f allocations per 256-token response, want none per chunk and at most 16 per response", continuous, n)
		}
	}
}
