package sim

import (
	"encoding/json"
	"strconv"
	"time"
)

// events renders one request's stream. Streams never marshal JSON per
// chunk: each event is the request's pre-rendered head, the token's
// pre-escaped text and a short tail.
type events struct {
	s      *Server
	j      *job
	head   []byte // start of every answer event, up to the opening quote of the text
	rhead  []byte // the same for reasoning events, where the API has them
	meta   []byte // `"id":…,"created":…,"model":…` shared by OpenAI events
	id     string
	prompt int
	sse    bool
	all    []piece // every piece of the answer (SGLang repeats the text so far)
	st     *stream // the engine's stream (nil for an Instant profile): its cached tokens
	// reason is how many of the first tokens are reasoning, streamed in
	// the API's reasoning form; 0 for an API without one.
	reason int
}

// hasReasoning reports whether an API streams reasoning apart from the
// answer: chat's reasoning_content, Anthropic's thinking blocks, the
// Responses API's reasoning items, Ollama's thinking. The others (raw
// completions, llama.cpp, TGI, SGLang, Triton) send it as answer text, as a
// server without a reasoning parser does.
func hasReasoning(a api) bool {
	switch a {
	case apiChat, apiAnthropic, apiResponses, apiOllamaGenerate, apiOllamaChat:
		return true
	}
	return false
}

// reasoningTokens is how many of a job's tokens are reasoning.
func (s *Server) reasoningTokens(j *job) int {
	if !hasReasoning(j.api) {
		return 0
	}
	return min(s.cfg.ReasoningTokens, j.maxTokens)
}

// cached is the prompt tokens the engine served from its prefix cache (0
// before admission and for an Instant profile, which has no cache).
func (e *events) cached() int64 {
	if e.st == nil {
		return 0
	}
	return e.st.cached.Load()
}

func (s *Server) newEvents(j *job) *events {
	e := &events{s: s, j: j, prompt: len(j.promptIDs), sse: true, reason: s.reasoningTokens(j)}
	model, _ := json.Marshal(j.model)
	id := strconv.FormatUint(s.ids.Add(1), 10)
	e.id = id
	created := strconv.FormatInt(time.Now().Unix(), 10)
	switch j.api {
	case apiChat:
		e.meta = []byte(`"id":"chatcmpl-sim-` + id + `","object":"chat.completion.chunk","created":` + created + `,"model":` + string(model))
		e.head = []byte(`data: {` + string(e.meta) + `,"choices":[{"index":0,"delta":{"content":"`)
		e.rhead = []byte(`data: {` + string(e.meta) + `,"choices":[{"index":0,"delta":{"reasoning_content":"`)
	case apiCompletions:
		e.meta = []byte(`"id":"cmpl-sim-` + id + `","object":"text_completion","created":` + created + `,"model":` + string(model))
		e.head = []byte(`data: {` + string(e.meta) + `,"choices":[{"index":0,"text":"`)
	case apiTGI:
		e.head = []byte(`data:{"index":`)
	case apiTRTLLM:
		e.head = []byte(`data: {"model_name":` + string(model) + `,"model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"`)
	case apiSGLang:
		e.meta = []byte(`"id":"sim-` + id + `"`)
		e.head = []byte(`data: {"text":"`)
	case apiResponses:
		// With reasoning, the reasoning item is output 0 and the message
		// output 1.
		e.meta = []byte(`"id":"resp_sim` + id + `","object":"response","created_at":` + created + `,"model":` + string(model))
		e.head = []byte(`event: response.output_text.delta` + "\n" + `data: {"type":"response.output_text.delta","item_id":"msg_sim` + id + `","output_index":` + e.answerIndex() + `,"content_index":0,"delta":"`)
		e.rhead = []byte(`event: response.reasoning_text.delta` + "\n" + `data: {"type":"response.reasoning_text.delta","item_id":"rs_sim` + id + `","output_index":0,"content_index":0,"delta":"`)
	case apiAnthropic:
		// With reasoning, the thinking block is block 0 and the text block
		// 1.
		e.meta = []byte(`"id":"msg_sim` + id + `","type":"message","role":"assistant","model":` + string(model))
		e.head = []byte(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":` + e.answerIndex() + `,"delta":{"type":"text_delta","text":"`)
		e.rhead = []byte(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`)
	case apiLlama:
		e.head = []byte(`data: {"index":0,"content":"`)
		e.meta = model
	case apiOllamaGenerate, apiOllamaChat:
		e.sse = false
		e.head = []byte(`{"model":` + string(model) + `,"created_at":"`)
	}
	return e
}

// answerIndex is the answer's block (Anthropic) or output item
// (Responses): 1 after a reasoning one, else 0.
func (e *events) answerIndex() string {
	if e.reason > 0 {
		return "1"
	}
	return "0"
}

// reported is the output token count the server claims for n sent.
func (e *events) reported(n int) int {
	if f := e.s.cfg.InflateUsage; f > 1 {
		return n * f
	}
	return n
}

func (e *events) appendUsage(b []byte, completion int) []byte {
	c := e.reported(completion)
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(e.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(e.prompt+c), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c), 10)
	return append(b, '}')
}

func appendText(b []byte, ps []piece) []byte {
	for _, p := range ps {
		b = append(b, p.esc...)
	}
	return b
}

// opening renders the events that open a stream before its first token,
// each without its closing brace (emit adds it): a chat's role-only delta,
// Anthropic's message_start, first block start and ping, the Responses
// API's created event and first item; none for the other APIs.
func (e *events) opening(b []byte) [][]byte {
	switch e.j.api {
	case apiChat:
		b = append(b, `data: {`...)
		b = append(b, e.meta...)
		b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
		if e.j.continuousUsage && !e.s.cfg.DropUsage {
			b = append(b, ',')
			b = e.appendUsage(b, 0)
		}
		return [][]byte{b}
	case apiResponses:
		created := append(b, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{"...)
		created = append(created, e.meta...)
		created = append(created, `,"status":"in_progress","error":null,"incomplete_details":null,"output":[],"usage":null}`...)
		if e.reason > 0 {
			return [][]byte{created, []byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs_sim" + e.id + "\",\"summary\":[]}")}
		}
		return append([][]byte{created}, e.responsesMessage()...)
	case apiAnthropic:
		start := append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{"...)
		start = append(start, e.meta...)
		start = append(start, `,"content":[],"stop_reason":null,"stop_sequence":null`...)
		if !e.s.cfg.DropUsage {
			start = append(start, `,"usage":{"input_tokens":`...)
			start = strconv.AppendInt(start, int64(e.prompt), 10)
			start = append(start, `,"output_tokens":1}`...)
		}
		start = append(start, '}')
		block := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}"
		if e.reason > 0 {
			block = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}"
		}
		return [][]byte{start, []byte(block), []byte("event: ping\ndata: {\"type\":\"ping\"")}
	}
	return nil
}

// responsesMessage opens the Responses message item that holds the answer.
func (e *events) responsesMessage() [][]byte {
	i := e.answerIndex()
	return [][]byte{
		[]byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":" + i + ",\"item\":{\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}"),
		[]byte("event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"output_index\":" + i + ",\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}"),
	}
}

// endReasoning renders what closes the reasoning before the answer (or the
// end): Anthropic's signature and the thinking block's stop, the Responses
// reasoning item's done event; each without its closing brace.
func (e *events) endReasoning() [][]byte {
	switch e.j.api {
	case apiAnthropic:
		return [][]byte{
			[]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2ltdWxhdGVk\"}"),
			[]byte("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0"),
		}
	case apiResponses:
		return [][]byte{[]byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs_sim" + e.id + "\",\"summary\":[]}")}
	}
	return nil
}

// startAnswer renders what opens the answer after the reasoning.
func (e *events) startAnswer() [][]byte {
	switch e.j.api {
	case apiAnthropic:
		return [][]byte{[]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}")}
	case apiResponses:
		return e.responsesMessage()
	}
	return nil
}

// content renders the events carrying ps; done is the token count after
// them, last marks the answer's last chunk. A chunk that crosses from
// reasoning to answer is a reasoning event, the events that switch from
// one to the other, and an answer event, in one write; the last event is
// left open for emit.
func (e *events) content(b []byte, ps []piece, done int, last bool) []byte {
	from := done - len(ps)
	rs := max(0, min(len(ps), e.reason-from)) // reasoning pieces in this chunk
	if rs > 0 {
		b = e.event(b, ps[:rs], from+rs, last && rs == len(ps), true)
		if rs == len(ps) {
			return b
		}
		b = e.close(b)
	}
	if e.reason > 0 && from+rs == e.reason {
		for _, ev := range append(e.endReasoning(), e.startAnswer()...) {
			b = e.close(append(b, ev...))
		}
	}
	return e.event(b, ps[rs:], done, last, false)
}

// event renders one event carrying ps, as reasoning when think.
func (e *events) event(b []byte, ps []piece, done int, last, think bool) []byte {
	j := e.j
	head := e.head
	if think && e.rhead != nil { // Ollama's reasoning is a field of the same line
		head = e.rhead
	}
	switch j.api {
	case apiChat, apiCompletions:
		b = append(b, head...)
		b = appendText(b, ps)
		if j.api == apiChat {
			b = append(b, `"},"logprobs":null,"finish_reason":`...)
		} else {
			b = append(b, `","logprobs":null,"finish_reason":`...)
		}
		if last {
			b = append(b, `"length"}]`...)
		} else {
			b = append(b, `null}]`...)
		}
		if j.continuousUsage && !e.s.cfg.DropUsage {
			b = append(b, ',')
			b = e.appendUsage(b, done)
		}
	case apiAnthropic:
		b = append(b, head...)
		b = appendText(b, ps)
		b = append(b, `"}`...)
	case apiResponses, apiTRTLLM:
		b = append(b, head...)
		b = appendText(b, ps)
		b = append(b, '"')
	case apiSGLang:
		// The text so far, cumulative, and the counts so far.
		b = append(b, head...)
		b = appendText(b, e.all[:done])
		b = append(b, `","meta_info":{`...)
		b = append(b, e.meta...)
		if last {
			b = append(b, `,"finish_reason":{"type":"length","length":`...)
			b = strconv.AppendInt(b, int64(j.maxTokens), 10)
			b = append(b, '}')
		} else {
			b = append(b, `,"finish_reason":null`...)
		}
		if !e.s.cfg.DropUsage {
			b = append(b, `,"prompt_tokens":`...)
			b = strconv.AppendInt(b, int64(e.prompt), 10)
			b = append(b, `,"completion_tokens":`...)
			b = strconv.AppendInt(b, int64(e.reported(done)), 10)
			b = append(b, `,"cached_tokens":`...)
			b = strconv.AppendInt(b, e.cached(), 10)
		}
		b = append(b, `},"index":0`...)
	case apiTGI:
		// TGI sends one token per event; a chunk of several tokens is
		// sent as several events in one write.
		for i, p := range ps {
			if i > 0 {
				b = e.close(b)
			}
			b = append(b, head...)
			b = strconv.AppendInt(b, int64(done-len(ps)+i+1), 10)
			b = append(b, `,"token":{"id":`...)
			b = strconv.AppendInt(b, int64(p.id), 10)
			b = append(b, `,"text":"`...)
			b = append(b, p.esc...)
			b = append(b, `","logprob":-0.01,"special":false},"generated_text":`...)
			if last && i == len(ps)-1 {
				t, _ := json.Marshal(e.s.out.text(j.maxTokens))
				b = append(b, t...)
				b = append(b, `,"details":{"finish_reason":"length"`...)
				if !e.s.cfg.DropUsage {
					b = append(b, `,"generated_tokens":`...)
					b = strconv.AppendInt(b, int64(e.reported(j.maxTokens)), 10)
					b = append(b, `,"input_length":`...)
					b = strconv.AppendInt(b, int64(e.prompt), 10)
				}
				b = append(b, `,"seed":null}`...)
			} else {
				b = append(b, `null,"details":null`...)
			}
		}
	case apiLlama:
		b = append(b, head...)
		b = appendText(b, ps)
		b = append(b, `","tokens":[`...)
		for i, p := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p.id), 10)
		}
		b = append(b, `],"stop":false,"id_slot":-1`...)
		if !e.s.cfg.DropUsage {
			b = append(b, `,"tokens_predicted":`...)
			b = strconv.AppendInt(b, int64(e.reported(done)), 10)
			b = append(b, `,"tokens_evaluated":`...)
			b = strconv.AppendInt(b, int64(e.prompt), 10)
		}
	case apiOllamaGenerate, apiOllamaChat:
		b = append(b, head...)
		b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
		switch {
		case j.api == apiOllamaGenerate && think:
			b = append(b, `","response":"","thinking":"`...)
		case j.api == apiOllamaGenerate:
			b = append(b, `","response":"`...)
		case think:
			b = append(b, `","message":{"role":"assistant","content":"","thinking":"`...)
		default:
			b = append(b, `","message":{"role":"assistant","content":"`...)
		}
		b = appendText(b, ps)
		if j.api == apiOllamaChat {
			b = append(b, '"', '}')
		} else {
			b = append(b, '"')
		}
		b = append(b, `,"done":false`...)
	}
	return b
}

func buf0(b []byte) []byte { return b[:0] }

// close ends an event: its closing brace and the line ending(s).
func (e *events) close(b []byte) []byte {
	if e.sse {
		return append(b, "}\n\n"...)
	}
	return append(b, "}\n"...)
}

// closeTimed stamps the event with the send time as late as possible:
// nothing but the append and the write follow the clock read (and, for an
// event held for the next one, that event's rendering: microseconds).
func (e *events) closeTimed(b []byte) []byte {
	b = append(b, `,"sim_sent_unix_ns":`...)
	b = strconv.AppendInt(b, time.Now().UnixNano(), 10)
	return e.close(b)
}

// final writes what follows the last token: usage and [DONE] (OpenAI),
// the stop event with timings (llama.cpp) or the done line (Ollama).
func (e *events) final(b []byte, t timing, emit func([]byte) bool, raw func(string) bool) bool {
	j, drop := e.j, e.s.cfg.DropUsage
	n := j.maxTokens
	switch j.api {
	case apiChat, apiCompletions:
		if j.includeUsage && !drop {
			b = append(b, `data: {`...)
			b = append(b, e.meta...)
			b = append(b, `,"choices":[],`...)
			b = e.appendUsage(b, n)
			// vLLM's usage with prefix caching: prompt_tokens_details.cached_tokens.
			b = append(b[:len(b)-1], `,"prompt_tokens_details":{"cached_tokens":`...)
			b = strconv.AppendInt(b, e.cached(), 10)
			b = append(b, `}}`...)
			if !emit(b) {
				return false
			}
		}
		return raw("data: [DONE]\n\n")
	case apiTGI:
		return true // the last token's event carried the details
	case apiSGLang:
		return raw("data: [DONE]\n\n")
	case apiTRTLLM:
		return true // Triton's stream just ends
	case apiResponses:
		// The generation stopped at max_output_tokens: response.incomplete
		// with its reason, as OpenAI's streaming events reference lists.
		if e.reason == n {
			for _, ev := range e.endReasoning() {
				if !emit(append(b, ev...)) {
					return false
				}
			}
		}
		b = append(b, "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{"...)
		b = append(b, e.meta...)
		b = append(b, `,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"},"output":[]`...)
		if !drop {
			c := e.reported(n)
			b = append(b, `,"usage":{"input_tokens":`...)
			b = strconv.AppendInt(b, int64(e.prompt), 10)
			b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
			b = strconv.AppendInt(b, e.cached(), 10)
			b = append(b, `},"output_tokens":`...)
			b = strconv.AppendInt(b, int64(c), 10)
			b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
			b = strconv.AppendInt(b, int64(e.reported(e.reason)), 10)
			b = append(b, `},"total_tokens":`...)
			b = strconv.AppendInt(b, int64(e.prompt+c), 10)
			b = append(b, '}')
		}
		return emit(append(b, '}'))
	case apiAnthropic:
		// The events Anthropic's streaming documentation lists after the
		// last delta; message_delta's usage is cumulative.
		if e.reason == n {
			for _, ev := range e.endReasoning() { // the thinking block is the last
				if !emit(append(b, ev...)) {
					return false
				}
			}
		} else if !emit(append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"+e.answerIndex()...)) {
			return false
		}
		b = append(buf0(b), "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null}"...)
		if !drop {
			b = append(b, `,"usage":{"output_tokens":`...)
			b = strconv.AppendInt(b, int64(e.reported(n)), 10)
			b = append(b, '}')
		}
		if !emit(b) {
			return false
		}
		return emit(append(buf0(b), "event: message_stop\ndata: {\"type\":\"message_stop\""...))
	case apiLlama:
		b = append(b, `data: {"index":0,"content":"","tokens":[],"stop":true,"id_slot":-1,"model":`...)
		b = append(b, e.meta...)
		b = append(b, `,"stop_type":"limit","stopping_word":"","truncated":false`...)
		if !drop {
			tm, _ := json.Marshal(e.s.llamaTimings(j, t))
			b = append(b, `,"tokens_predicted":`...)
			b = strconv.AppendInt(b, int64(e.reported(n)), 10)
			b = append(b, `,"tokens_evaluated":`...)
			b = strconv.AppendInt(b, int64(e.prompt), 10)
			b = append(b, `,"tokens_cached":`...)
			b = strconv.AppendInt(b, int64(t.cached), 10)
			b = append(b, `,"timings":`...)
			b = append(b, tm...)
		}
		return emit(b)
	default:
		b = append(b, e.head...)
		b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
		if j.api == apiOllamaGenerate {
			b = append(b, `","response":""`...)
		} else {
			b = append(b, `","message":{"role":"assistant","content":""}`...)
		}
		b = append(b, `,"done":true,"done_reason":"length"`...)
		if !drop {
			o := e.s.ollamaCounts(j, t)
			for _, kv := range []struct {
				k string
				v int64
			}{{"total_duration", o.Total}, {"load_duration", o.Load}, {"prompt_eval_count", int64(o.PromptCount)},
				{"prompt_eval_duration", o.PromptDur}, {"eval_count", int64(o.EvalCount)}, {"eval_duration", o.EvalDur}} {
				b = append(b, `,"`...)
				b = append(b, kv.k...)
				b = append(b, `":`...)
				b = strconv.AppendInt(b, kv.v, 10)
			}
		}
		return emit(b)
	}
}
