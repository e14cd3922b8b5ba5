package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// run waits for the engine's tokens and writes them in the job's API
// shape. Streams never marshal JSON per chunk: each event is the request's
// pre-rendered head, the token's pre-escaped text and a short tail.
func (s *Server) run(w http.ResponseWriter, r *http.Request, j *job) {
	ctx := r.Context()
	n := j.maxTokens
	pieces := s.out.get(n)
	prompt := len(j.promptIDs)
	t := timing{start: time.Now()}

	var st *stream
	if s.eng != nil {
		st = newStream()
		defer st.gone.Store(true) // an unfinished stream leaves the engine
		sq := &seq{promptTokens: prompt, maxTokens: n, out: st, noReuse: j.noReuse}
		if !s.cfg.DisablePrefixCache && s.prof.BlockSize > 0 && s.prof.CacheBlocks > 0 {
			// One chain over prompt and answer: its first blocks are the
			// prompt's (looked up at admission), all of them enter the
			// cache when the answer is complete.
			ids := make([]int, prompt, prompt+n)
			copy(ids, j.promptIDs)
			for _, p := range pieces[:n] {
				ids = append(ids, p.id)
			}
			sq.doneHashes = blockHashes(ids, s.prof.BlockSize)
			sq.hashes = sq.doneHashes[:prompt/s.prof.BlockSize]
		}
		// The request reaches the engine Overhead after it was received;
		// the engine holds it until then on its own clock (a timer here
		// would wake up to a millisecond late).
		t.queued = t.start.Add(s.prof.Overhead)
		st.queued = t.queued.UnixNano()
		sq.arrive = st.queued
		if !s.eng.submit(sq) {
			return
		}
	} else {
		t.queued = t.start
		s.met.generated.Add(float64(n))
	}
	avail := func() int {
		if st == nil {
			return n
		}
		return int(st.avail.Load())
	}
	wait := func() bool {
		select {
		case <-st.notify:
			return true
		case <-ctx.Done():
			return false
		case <-s.quit:
			return false
		}
	}

	if !j.stream {
		for avail() < n {
			if !wait() {
				return
			}
		}
		t.finish(st)
		s.writeBody(w, j, t)
		return
	}

	rc := http.NewResponseController(w)
	h := w.Header()
	if j.api == apiOllamaGenerate || j.api == apiOllamaChat {
		h.Set("Content-Type", "application/x-ndjson")
	} else {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}

	e := s.newEvents(j)
	e.st = st
	e.all = pieces
	per := max(1, s.cfg.TokensPerChunk)
	if s.cfg.NoStream {
		per = n
	}
	buf := make([]byte, 0, 1024)
	sent := 0
	// held keeps events in the response's buffer instead of flushing each:
	// the events that open a stream (a chat's role delta, Anthropic's and
	// the Responses API's start events) leave in one write with the first
	// token, and the ones after the last token (usage, [DONE]) in one write
	// with the end of the body. A flush per event cost a write system call
	// and, on the client, a wake-up and a read each, all in the first and
	// last tick of a burst of streams, when both sides are busiest
	// (docs/PERFORMANCE.md, "Why the tail at 1,024 aligned streams").
	held := false
	flush := func() bool { return held || rc.Flush() == nil }
	// emit closes the event in b (stamping the send time in test mode),
	// writes and flushes it; raw writes a non-JSON line such as [DONE].
	emit := func(b []byte) bool {
		if s.cfg.SendTimes {
			b = e.closeTimed(b)
		} else {
			b = e.close(b)
		}
		buf = b[:0]
		if _, err := w.Write(b); err != nil {
			return false
		}
		return flush()
	}
	raw := func(line string) bool {
		if _, err := io.WriteString(w, line); err != nil {
			return false
		}
		return flush()
	}
	// pace holds the next chunk until its deadline under TokenInterval
	// and FirstTokenDelay.
	var paceTimer *time.Timer
	chunks := 0
	pace := func() bool {
		iv, d0 := s.cfg.TokenInterval, s.cfg.FirstTokenDelay
		if iv <= 0 && (d0 <= 0 || chunks > 0) {
			return true
		}
		chunks++
		d := time.Until(t.start.Add(d0 + time.Duration(chunks)*iv))
		if d <= 0 {
			return true
		}
		if paceTimer == nil {
			paceTimer = time.NewTimer(d)
		} else {
			paceTimer.Reset(d)
		}
		select {
		case <-paceTimer.C:
			return true
		case <-ctx.Done():
		case <-s.quit:
		}
		paceTimer.Stop()
		return false
	}
	for sent < n {
		have := avail()
		for sent < have {
			k := min(per, n-sent)
			if lim := s.cfg.StallAfter; lim > sent {
				k = min(k, lim-sent)
			}
			if lim := s.cfg.ResetAfter; lim > sent {
				k = min(k, lim-sent)
			}
			if sent+k > have {
				break
			}
			if !pace() {
				return
			}
			held = sent == 0 // the opening events go with the first token
			if sent == 0 && j.api == apiResponses {
				for _, ev := range e.responsesStart(buf[:0]) {
					if !emit(ev) {
						return
					}
				}
			}
			if sent == 0 && j.api == apiAnthropic {
				// message_start (input usage), the text block's start, a ping.
				for _, ev := range e.anthropicStart(buf[:0]) {
					if !emit(ev) {
						return
					}
				}
			}
			if sent == 0 && j.api == apiChat {
				// Real servers open a chat stream with a role-only delta.
				if !emit(e.role(buf[:0])) {
					return
				}
			}
			held = false
			if !emit(e.content(buf[:0], pieces[sent:sent+k], sent+k, sent+k == n)) {
				return
			}
			sent += k
			if sent == k {
				t.firstWrite = time.Now()
			}
			if lim := s.cfg.StallAfter; lim > 0 && sent >= lim && sent < n {
				select {
				case <-ctx.Done():
				case <-s.quit:
				}
				return
			}
			if lim := s.cfg.ResetAfter; lim > 0 && sent >= lim && sent < n {
				resetConn(w)
				return
			}
		}
		if sent >= n {
			break
		}
		if !wait() {
			return
		}
	}
	t.finish(st)
	if s.cfg.ResetAfter == n {
		resetConn(w)
		return
	}
	if s.cfg.StallAfter == n {
		select {
		case <-ctx.Done():
		case <-s.quit:
		}
		return
	}
	// What follows the last token leaves in one write, with the end of the
	// chunked body that the server writes when the handler returns.
	held = true
	e.final(buf[:0], t, emit, raw)
}

// timing is what llama.cpp timings and Ollama durations report.
type timing struct {
	start, queued     time.Time
	firstWrite        time.Time
	first, last       time.Time
	cached            int
	promptDur, genDur time.Duration
}

func (t *timing) finish(st *stream) {
	if st != nil {
		t.first = time.Unix(0, st.first.Load())
		t.last = time.Unix(0, st.last.Load())
		t.cached = int(st.cached.Load())
	} else {
		t.first = t.firstWrite
		if t.first.IsZero() {
			t.first = t.start
		}
		t.last = time.Now()
	}
	t.promptDur = max(0, t.first.Sub(t.queued))
	t.genDur = max(0, t.last.Sub(t.first))
}

// events renders one request's stream.
type events struct {
	s      *Server
	j      *job
	head   []byte // start of every content event, up to the opening quote of the text
	meta   []byte // `"id":…,"created":…,"model":…` shared by OpenAI events
	prompt int
	sse    bool
	all    []piece // every piece of the answer (SGLang repeats the text so far)
	st     *stream // the engine's stream (nil for an Instant profile): its cached tokens
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
	e := &events{s: s, j: j, prompt: len(j.promptIDs)}
	model, _ := json.Marshal(j.model)
	id := strconv.FormatUint(s.ids.Add(1), 10)
	created := strconv.FormatInt(time.Now().Unix(), 10)
	switch j.api {
	case apiChat:
		e.sse = true
		e.meta = []byte(`"id":"chatcmpl-sim-` + id + `","object":"chat.completion.chunk","created":` + created + `,"model":` + string(model))
		e.head = []byte(`data: {` + string(e.meta) + `,"choices":[{"index":0,"delta":{"content":"`)
	case apiCompletions:
		e.sse = true
		e.meta = []byte(`"id":"cmpl-sim-` + id + `","object":"text_completion","created":` + created + `,"model":` + string(model))
		e.head = []byte(`data: {` + string(e.meta) + `,"choices":[{"index":0,"text":"`)
	case apiTGI:
		e.sse = true
		e.head = []byte(`data:{"index":`)
	case apiTRTLLM:
		e.sse = true
		e.head = []byte(`data: {"model_name":` + string(model) + `,"model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"`)
	case apiSGLang:
		e.sse = true
		e.meta = []byte(`"id":"sim-` + id + `"`)
		e.head = []byte(`data: {"text":"`)
	case apiResponses:
		e.sse = true
		e.meta = []byte(`"id":"resp_sim` + id + `","object":"response","created_at":` + created + `,"model":` + string(model))
		e.head = []byte(`event: response.output_text.delta` + "\n" + `data: {"type":"response.output_text.delta","item_id":"msg_sim` + id + `","output_index":0,"content_index":0,"delta":"`)
	case apiAnthropic:
		e.sse = true
		e.meta = []byte(`"id":"msg_sim` + id + `","type":"message","role":"assistant","model":` + string(model))
		e.head = []byte(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`)
	case apiLlama:
		e.sse = true
		e.head = []byte(`data: {"index":0,"content":"`)
		e.meta = model
	case apiOllamaGenerate, apiOllamaChat:
		e.head = []byte(`{"model":` + string(model) + `,"created_at":"`)
	}
	return e
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

func (e *events) role(b []byte) []byte {
	b = append(b, `data: {`...)
	b = append(b, e.meta...)
	b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
	if e.j.continuousUsage && !e.s.cfg.DropUsage {
		b = append(b, ',')
		b = e.appendUsage(b, 0)
	}
	return b
}

// content renders the event carrying ps; done is the token count after it.
func (e *events) content(b []byte, ps []piece, done int, last bool) []byte {
	j := e.j
	switch j.api {
	case apiChat, apiCompletions:
		b = append(b, e.head...)
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
		b = append(b, e.head...)
		b = appendText(b, ps)
		b = append(b, `"}`...)
	case apiResponses:
		b = append(b, e.head...)
		b = appendText(b, ps)
		b = append(b, '"')
	case apiTRTLLM:
		b = append(b, e.head...)
		b = appendText(b, ps)
		b = append(b, '"')
	case apiSGLang:
		// The text so far, cumulative, and the counts so far.
		b = append(b, e.head...)
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
				b = append(b, "}\n\n"...)
			}
			b = append(b, e.head...)
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
		b = append(b, e.head...)
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
		b = append(b, e.head...)
		b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
		if j.api == apiOllamaGenerate {
			b = append(b, `","response":"`...)
			b = appendText(b, ps)
			b = append(b, `","done":false`...)
		} else {
			b = append(b, `","message":{"role":"assistant","content":"`...)
			b = appendText(b, ps)
			b = append(b, `"},"done":false`...)
		}
	}
	return b
}

func buf0(b []byte) []byte { return b[:0] }

// responsesStart renders the events that open a Responses stream, each
// without its closing brace.
func (e *events) responsesStart(b []byte) [][]byte {
	created := append(b, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{"...)
	created = append(created, e.meta...)
	created = append(created, `,"status":"in_progress","error":null,"incomplete_details":null,"output":[],"usage":null}`...)
	return [][]byte{
		created,
		[]byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}"),
		[]byte("event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}"),
	}
}

// anthropicStart renders the events that open an Anthropic stream, each
// without its closing brace (emit adds it).
func (e *events) anthropicStart(b []byte) [][]byte {
	start := append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{"...)
	start = append(start, e.meta...)
	start = append(start, `,"content":[],"stop_reason":null,"stop_sequence":null`...)
	if !e.s.cfg.DropUsage {
		start = append(start, `,"usage":{"input_tokens":`...)
		start = strconv.AppendInt(start, int64(e.prompt), 10)
		start = append(start, `,"output_tokens":1}`...)
	}
	start = append(start, '}')
	return [][]byte{
		start,
		[]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}"),
		[]byte("event: ping\ndata: {\"type\":\"ping\""),
	}
}

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
			b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
			b = strconv.AppendInt(b, int64(e.prompt+c), 10)
			b = append(b, '}')
		}
		return emit(append(b, '}'))
	case apiAnthropic:
		// The events Anthropic's streaming documentation lists after the
		// last delta; message_delta's usage is cumulative.
		if !emit(append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0"...)) {
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

// llamaTiming is llama.cpp's timings object.
type llamaTiming struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
}

// llamaTimings reports like llama-server: prompt_n counts only the tokens
// actually prefilled (cache_n were reused), prompt_ms runs from the
// engine receiving the request to the first token, predicted_ms from the
// first token to the last.
func (s *Server) llamaTimings(j *job, t timing) llamaTiming {
	n := j.maxTokens
	if f := s.cfg.InflateUsage; f > 1 {
		n *= f
	}
	lt := llamaTiming{
		CacheN:      t.cached,
		PromptN:     len(j.promptIDs) - t.cached,
		PromptMS:    float64(t.promptDur) / 1e6,
		PredictedN:  n,
		PredictedMS: float64(t.genDur) / 1e6,
	}
	if lt.PromptN > 0 && lt.PromptMS > 0 {
		lt.PromptPerTokenMS = lt.PromptMS / float64(lt.PromptN)
		lt.PromptPerSecond = 1e3 * float64(lt.PromptN) / lt.PromptMS
	}
	// The first token comes out of the prefill step, so the decode rate
	// is over the n-1 tokens after it, as llama.cpp's own figure is.
	if n > 1 && lt.PredictedMS > 0 {
		lt.PredictedPerTokenMS = lt.PredictedMS / float64(n-1)
		lt.PredictedPerSecond = 1e3 * float64(n-1) / lt.PredictedMS
	}
	return lt
}

// ollamaTiming is the done line's counts, durations in nanoseconds.
type ollamaTiming struct {
	Total, Load, PromptDur, EvalDur int64
	PromptCount, EvalCount          int
}

func (s *Server) ollamaCounts(j *job, t timing) ollamaTiming {
	n := j.maxTokens
	if f := s.cfg.InflateUsage; f > 1 {
		n *= f
	}
	return ollamaTiming{
		Total:       int64(t.last.Sub(t.start)),
		PromptDur:   int64(t.promptDur),
		EvalDur:     int64(t.genDur),
		PromptCount: len(j.promptIDs),
		EvalCount:   n,
	}
}

// writeBody answers a request that asked for no streaming with one JSON
// object in the API's shape.
func (s *Server) writeBody(w http.ResponseWriter, j *job, t timing) {
	text := s.out.text(j.maxTokens)
	n := j.maxTokens
	rep := n
	if f := s.cfg.InflateUsage; f > 1 {
		rep = n * f
	}
	prompt := len(j.promptIDs)
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": rep, "total_tokens": prompt + rep}
	id := strconv.FormatUint(s.ids.Add(1), 10)
	now := time.Now()
	var body map[string]any
	switch j.api {
	case apiChat:
		body = map[string]any{
			"id": "chatcmpl-sim-" + id, "object": "chat.completion", "created": now.Unix(), "model": j.model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "logprobs": nil, "finish_reason": "length"}},
			"usage":   usage,
		}
	case apiCompletions:
		body = map[string]any{
			"id": "cmpl-sim-" + id, "object": "text_completion", "created": now.Unix(), "model": j.model,
			"choices": []any{map[string]any{"index": 0, "text": text, "logprobs": nil, "finish_reason": "length"}},
			"usage":   usage,
		}
	case apiResponses:
		body = map[string]any{
			"id": "resp_sim" + id, "object": "response", "created_at": now.Unix(), "model": j.model,
			"status": "incomplete", "incomplete_details": map[string]any{"reason": "max_output_tokens"}, "error": nil,
			"output": []any{map[string]any{"type": "message", "role": "assistant", "status": "incomplete",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}},
			"usage": map[string]int{"input_tokens": prompt, "output_tokens": rep, "total_tokens": prompt + rep},
		}
	case apiAnthropic:
		body = map[string]any{
			"id": "msg_sim" + id, "type": "message", "role": "assistant", "model": j.model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "max_tokens", "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": prompt, "output_tokens": rep},
		}
	case apiLlama:
		body = map[string]any{
			"index": 0, "content": text, "stop": true, "id_slot": -1, "model": j.model, "stop_type": "limit",
			"tokens_predicted": rep, "tokens_evaluated": prompt, "tokens_cached": t.cached, "timings": s.llamaTimings(j, t),
		}
	default:
		o := s.ollamaCounts(j, t)
		body = map[string]any{
			"model": j.model, "created_at": now.UTC().Format(time.RFC3339Nano), "done": true, "done_reason": "length",
			"total_duration": o.Total, "load_duration": o.Load, "prompt_eval_count": o.PromptCount,
			"prompt_eval_duration": o.PromptDur, "eval_count": o.EvalCount, "eval_duration": o.EvalDur,
		}
		if j.api == apiOllamaGenerate {
			body["response"] = text
		} else {
			body["message"] = map[string]any{"role": "assistant", "content": text}
		}
	}
	if s.cfg.DropUsage {
		for _, k := range []string{"usage", "timings", "tokens_predicted", "tokens_evaluated", "tokens_cached",
			"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"} {
			delete(body, k)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}
