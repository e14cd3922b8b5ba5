package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// run waits for the engine's tokens and writes them in the job's API shape
// (render.go).
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
	// and FirstTokenDelay. The first chunk's deadline is FirstTokenDelay
	// + TokenInterval after the request arrived or, when the engine made
	// it ready later than that (a long prefill), the time it was ready;
	// the k-th chunk's is (k−1) intervals after the first's. Counted from
	// the arrival alone, a prefill longer than the intervals put every
	// deadline in the past and the stream left at the engine's decode
	// pace, not the one asked for.
	var paceTimer *time.Timer
	var firstDue time.Time
	chunks := 0
	pace := func() bool {
		iv, d0 := s.cfg.TokenInterval, s.cfg.FirstTokenDelay
		if iv <= 0 && (d0 <= 0 || chunks > 0) {
			return true
		}
		chunks++
		if chunks == 1 {
			firstDue = t.start.Add(d0 + iv)
			if now := time.Now(); now.After(firstDue) {
				firstDue = now
			}
		}
		d := time.Until(firstDue.Add(time.Duration(chunks-1) * iv))
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
			if sent == 0 {
				// A chat's role-only delta (real servers open with one),
				// Anthropic's message_start, the Responses API's created
				// event and first item.
				for _, ev := range e.opening(buf[:0]) {
					if !emit(ev) {
						return
					}
				}
			}
			held = false
			if s.onChunk != nil {
				s.onChunk(j.api, sent+k, avail())
			}
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
	n := j.maxTokens
	r := s.reasoningTokens(j)
	think, text := s.out.textRange(0, r), s.out.textRange(r, n)
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
			"choices": []any{map[string]any{"index": 0, "message": message(text, "reasoning_content", think), "logprobs": nil, "finish_reason": "length"}},
			"usage":   usage,
		}
	case apiCompletions:
		body = map[string]any{
			"id": "cmpl-sim-" + id, "object": "text_completion", "created": now.Unix(), "model": j.model,
			"choices": []any{map[string]any{"index": 0, "text": text, "logprobs": nil, "finish_reason": "length"}},
			"usage":   usage,
		}
	case apiResponses:
		output := []any{map[string]any{"type": "message", "role": "assistant", "status": "incomplete",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}}
		usage := map[string]any{"input_tokens": prompt, "output_tokens": rep, "total_tokens": prompt + rep}
		if r > 0 {
			output = append([]any{map[string]any{"type": "reasoning", "id": "rs_sim" + id, "summary": []any{},
				"content": []any{map[string]any{"type": "reasoning_text", "text": think}}}}, output...)
			usage["output_tokens_details"] = map[string]int{"reasoning_tokens": r}
		}
		body = map[string]any{
			"id": "resp_sim" + id, "object": "response", "created_at": now.Unix(), "model": j.model,
			"status": "incomplete", "incomplete_details": map[string]any{"reason": "max_output_tokens"}, "error": nil,
			"output": output, "usage": usage,
		}
	case apiAnthropic:
		body = map[string]any{
			"id": "msg_sim" + id, "type": "message", "role": "assistant", "model": j.model,
			"content":     anthropicContent(think, text),
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
			if think != "" {
				body["thinking"] = think
			}
		} else {
			body["message"] = message(text, "thinking", think)
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

// message is an assistant message with its reasoning under key, if any.
func message(text, key, think string) map[string]any {
	m := map[string]any{"role": "assistant", "content": text}
	if think != "" {
		m[key] = think
	}
	return m
}

// anthropicContent is a Message's content blocks: the thinking block with
// its signature, if any, and the text.
func anthropicContent(think, text string) []any {
	blocks := []any{map[string]any{"type": "text", "text": text}}
	if think != "" {
		blocks = append([]any{map[string]any{"type": "thinking", "thinking": think, "signature": "c2ltdWxhdGVk"}}, blocks...)
	}
	return blocks
}
