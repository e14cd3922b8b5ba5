package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/replay/stream"
	"github.com/llmreplay/llmreplay/trace"
)

// MaxEventSize bounds one streamed event (and one non-streamed JSON body)
// in bytes. A streamed event carries a few tokens; the largest legitimate
// one is a whole non-streamed answer, about 1 MB for 128k tokens of text.
// With ten thousand streams in flight the bound, not the server, decides the
// worst case of the client's memory, so it is kept well below the stream
// package's general default.
const MaxEventSize = 4 << 20

// event is what one streamed event carried, as the API's table and
// interpretation found it. Slices point into the event's data or the
// state's scratch buffers and are valid until the next event.
type event struct {
	text, reasoning []byte
	// tokens is the server's own count of tokens in this event, 0 if unknown.
	tokens int
	// finish is the API's finish signal (finish_reason, stop, done); an
	// empty word is no finish.
	finish    []byte
	hasFinish bool
	// usageChunk marks an event whose point is the final usage object (an
	// OpenAI usage-only chunk): it is recorded as a chunk of its own.
	usageChunk bool
	// role marks an event that opens the answer without content (OpenAI's
	// role-only first delta): it is recorded as a chunk, with no text, so
	// its arrival is kept for the definitions that count it.
	role    bool
	serverT int64
	isErr   bool
	errMsg  []byte
}

// state is one Read's working memory, pooled so a request costs no
// allocation beyond the chunks and strings it keeps.
type state struct {
	p   stream.Parser
	js  jscan
	ev  event
	cap captures // what the walk of the event in ev found

	// scratch for strings that had escapes: text, reasoning, error
	// messages, captured strings, mapped words
	tbuf, rbuf, mbuf, wbuf []byte
	sbuf                   [nSlots][]byte

	usage, timings []byte
	hasUsage       bool
	hasTimings     bool
	prevCompletion int64
	// continuous is set once usage has come with a token-bearing chunk
	// (vLLM's continuous_usage_stats): only then is a chunk's usage its own.
	continuous bool

	finish   []byte
	finished bool
	// After the first finish signal: finish reasons that differ from it,
	// and the text that still came (a server that runs on past its own
	// finish). The first finish is the one kept; these become notes.
	lateFinish []string
	lateText   int

	// The response's text and reasoning in arrival order, and each
	// chunk's part of it (texts).
	text  []byte
	spans []span

	// What the response has cost so far, against its bounds (overlong).
	wire, textBytes int
	capped          cappedReader
	// maxChunks, maxText, maxWire are the response's bounds (responseBounds).
	maxChunks, maxText, maxWire int

	doc []byte // a JSON document sent as several lines

	// Anthropic: usage counts merged across events, and the stop_reason of
	// message_delta held until message_stop. SGLang: the cumulative text so
	// far.
	anthUsage  [len(anthUsageKeys)]int64
	anthHave   [len(anthUsageKeys)]bool
	pending    []byte
	hasPending bool
}

var statePool = sync.Pool{New: func() any { return new(state) }}

func getState() *state {
	st := statePool.Get().(*state)
	st.usage, st.timings, st.finish, st.doc = st.usage[:0], st.timings[:0], st.finish[:0], st.doc[:0]
	st.hasUsage, st.hasTimings, st.finished, st.prevCompletion, st.continuous = false, false, false, 0, false
	st.lateFinish, st.lateText, st.wire, st.textBytes = st.lateFinish[:0], 0, 0, 0
	st.text, st.spans = st.text[:0], st.spans[:0]
	st.anthUsage, st.anthHave, st.pending, st.hasPending = [len(anthUsageKeys)]int64{}, [len(anthUsageKeys)]bool{}, st.pending[:0], false
	return st
}

func putState(st *state) {
	st.p.Reset(nil, nil, stream.SSE, stream.Options{})
	st.capped = cappedReader{}
	st.js.reset(nil)
	if cap(st.doc) > 64<<10 || cap(st.usage) > 64<<10 || cap(st.timings) > 64<<10 ||
		cap(st.tbuf) > 64<<10 || cap(st.rbuf) > 64<<10 || cap(st.pending) > 64<<10 || cap(st.mbuf) > 64<<10 ||
		cap(st.text) > 64<<10 || cap(st.spans) > 4<<10 {
		return // grown for a rare large event: let it go
	}
	statePool.Put(st)
}

// errorField makes llama.cpp's "error: {...}" lines (outside the SSE
// specification) events named "error", like an SSE "event: error".
var errorField = []string{"error"}

// reader is what differs between APIs when reading a response.
type reader struct {
	format stream.Format
	// finishSignal names the API's finish signal in error messages.
	finishSignal string
	// fields is the table of an event's members.
	fields *fields
	// interpret turns what the walk captured into st.ev (and st.usage,
	// st.timings); nil when the table alone says everything. It returns a
	// *trace.Error for data of the wrong shape.
	interpret func(st *state, data []byte) *trace.Error
	// endFinishes is set for an API without a finish field (Triton's
	// generate_stream): a clean end of the body after an event finishes.
	endFinishes bool
}

// parse reads one event's data into st.ev.
func (a *reader) parse(st *state, data []byte) *trace.Error {
	st.ev = event{}
	st.cap.seen, st.cap.flags, st.cap.rawn, st.cap.elems = 0, 0, 0, 0
	if err := st.top(data); err != nil {
		return err
	}
	if err := st.members(data, a.fields); err != nil {
		return err
	}
	if err := st.done(data); err != nil {
		return err
	}
	if a.interpret != nil {
		if err := a.interpret(st, data); err != nil {
			return err
		}
	}
	if len(st.ev.finish) == 0 {
		st.ev.hasFinish = false // "" is what some servers send instead of null
	}
	return nil
}

// read consumes a response body for a. How it treats a server that does not
// answer in the expected format:
//   - the format is sniffed from the first byte, so NDJSON where SSE was
//     asked for (or the reverse) is read as what it is;
//   - a non-streamed JSON body is read as one event, so its text becomes one
//     chunk and, if it carried a finish signal, the request succeeds (the
//     analysis flags a response that did not stream); a body pretty-printed
//     over several lines is joined and read as one document;
//   - a body that is neither (an HTML page with status 200) is malformed.
func read(a *reader, body io.Reader, now func() int64, rec *trace.Record) error {
	st := getState()
	defer putState(st)
	err := st.read(a, body, now, rec)
	// What the server said is kept whatever happened after it.
	st.texts(rec)
	if st.hasUsage {
		rec.Usage = string(st.usage)
	}
	if st.hasTimings {
		rec.Timings = string(st.timings)
	}
	if st.finished {
		rec.FinishReason = finishString(st.finish)
	}
	if len(st.lateFinish) > 0 {
		rec.Notes = addNote(rec.Notes, "finish reasons after the first: "+strings.Join(st.lateFinish, ", "))
	}
	if st.lateText > 0 {
		rec.Notes = addNote(rec.Notes, fmt.Sprintf("%d bytes of text after the finish signal", st.lateText))
	}
	return err
}

// errWireBound is a body read past its response's wire bound.
var errWireBound = errors.New("the response is longer than its bound")

// cappedReader reads at most left bytes, then fails with errWireBound.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errWireBound
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func addNote(notes, n string) string {
	if notes == "" {
		return n
	}
	return notes + "; " + n
}

// Bounds of one response. A server that streams valid chunks forever past
// max_tokens would otherwise hold a stream (and its growing record) until
// the request timeout; ten minutes of one-token chunks is millions of
// them. The bounds are generous multiples of what max_tokens allows: one
// chunk per token plus a few without (role, usage, finish), text far
// longer per token than any tokenizer makes, and wire bytes of a verbose
// API with every option on. A request without max_tokens gets the bounds of
// a long answer.
const (
	overlongChunksPerToken = 4
	overlongChunksSlack    = 64
	overlongTextPerToken   = 256
	overlongTextSlack      = 1 << 20
	overlongWirePerToken   = 16 << 10
	overlongWireSlack      = 16 << 20
	overlongDefaultTokens  = 32 << 10 // bounds for a request without max_tokens
)

// responseBounds are the chunk, text and wire-byte bounds for a request
// asking for maxTokens.
func responseBounds(maxTokens int) (chunks, text, wire int) {
	if maxTokens <= 0 {
		maxTokens = overlongDefaultTokens
	}
	return overlongChunksPerToken*maxTokens + overlongChunksSlack,
		overlongTextPerToken*maxTokens + overlongTextSlack,
		overlongWirePerToken*maxTokens + overlongWireSlack
}

// overlong checks the response so far against its bounds.
func (st *state) overlong(rec *trace.Record) *trace.Error {
	chunks, text, wire := st.maxChunks, st.maxText, st.maxWire
	var what string
	switch {
	case len(rec.Chunks) > chunks:
		what = fmt.Sprintf("%d chunks", chunks)
	case st.textBytes > text:
		what = fmt.Sprintf("%d bytes of text", text)
	case st.wire > wire:
		what = fmt.Sprintf("%d bytes", wire)
	default:
		return nil
	}
	asked := fmt.Sprintf("max_tokens %d", rec.MaxTokens)
	if rec.MaxTokens <= 0 {
		asked = "no max_tokens"
	}
	return &trace.Error{Class: trace.ErrOverlong,
		Message: fmt.Sprintf("the response went past %s for %s: reading stopped (the server does not stop at the length asked)", what, asked)}
}

func (st *state) read(a *reader, body io.Reader, now func() int64, rec *trace.Record) error {
	p := &st.p
	// The wire bound also covers bytes that make no event (SSE comments
	// sent forever keep the idle timeout quiet and never reach a check).
	// The bounds are the request's, worked out once, not per event.
	st.maxChunks, st.maxText, st.maxWire = responseBounds(rec.MaxTokens)
	wire := st.maxWire
	st.capped = cappedReader{r: body, left: int64(wire)}
	p.Reset(&st.capped, now, a.format, stream.Options{MaxEventSize: MaxEventSize, Sniff: true, Fields: errorField})

	var (
		events  int
		carry   int // bytes of events that carried nothing, charged to the next chunk
		sawDone bool
		docMode bool
		docT    int64
		docB    int
	)
	for p.Next() {
		ev := p.Event()
		if docMode {
			if len(st.doc)+len(ev.Data)+1 > MaxEventSize {
				return malformed(fmt.Sprintf("the response is a JSON document over %d bytes", MaxEventSize), nil)
			}
			st.doc = append(st.doc, '\n')
			st.doc = append(st.doc, ev.Data...)
			docT, docB = ev.T, docB+ev.Bytes
			continue
		}
		if isDone(ev.Data) {
			sawDone = true
			break
		}
		events++
		if ev.Name == "error" {
			st.ev = event{}
			if st.top(ev.Data) == nil { // JSON: take its message if it has one
				st.ev.errMsg = st.errorObject()
			}
			return st.serverError(ev.Data, "an SSE error event")
		}
		if err := a.parse(st, ev.Data); err != nil {
			if events == 1 && p.Format() == stream.NDJSON && st.js.truncated() {
				// The first line is the start of a JSON value: a whole
				// response pretty-printed over lines.
				docMode = true
				st.doc = append(st.doc[:0], ev.Data...)
				docT, docB = ev.T, ev.Bytes
				continue
			}
			if ev.Partial {
				return &trace.Error{Class: trace.ErrIncomplete,
					Message: "the stream ended inside an event: " + err.Message, Body: clip(ev.Data, bodyMax)}
			}
			return err
		}
		if st.ev.isErr {
			return st.serverError(ev.Data, "an error object")
		}
		st.record(rec, ev.T, ev.Bytes, &carry)
		st.wire += ev.Bytes
		if len(rec.Chunks) > st.maxChunks || st.textBytes > st.maxText || st.wire > st.maxWire {
			return st.overlong(rec)
		}
	}
	if err := p.Err(); err != nil {
		if errors.Is(err, errWireBound) {
			st.wire = wire + 1
			return st.overlong(rec)
		}
		if errors.Is(err, stream.ErrTooLarge) {
			return malformed(err.Error()+": the server sent a line or event beyond any real response", nil)
		}
		return err // a network error, for the engine to classify
	}
	if docMode {
		if err := a.parse(st, st.doc); err != nil {
			return err
		}
		if st.ev.isErr {
			return st.serverError(st.doc, "an error object")
		}
		st.record(rec, docT, docB, &carry)
	}
	if a.endFinishes && events > 0 && !st.finished {
		st.finish, st.finished = append(st.finish[:0], "stop"...), true
	}
	if st.finished {
		return nil
	}
	if events == 0 {
		if n, first := p.Ignored(); n > 0 {
			return malformed(fmt.Sprintf("the body is not an event stream: %d lines, none an SSE field; the first: %q", n, first), nil)
		}
		return &trace.Error{Class: trace.ErrIncomplete, Message: "the response ended before its first event"}
	}
	end := "the end of the body"
	if sawDone {
		end = "[DONE]"
	}
	return &trace.Error{Class: trace.ErrIncomplete,
		Message: fmt.Sprintf("the stream reached %s after %d events without a %s", end, events, a.finishSignal)}
}

// record appends a chunk for the event just parsed if it carried anything:
// text, reasoning, a token count, the finish, the final usage, or the role
// that opens the answer (a chunk with no text, which the analysis never
// takes for the first token). An empty event is not a chunk; its bytes go to
// the next chunk so that chunk bytes add up to the body.
func (st *state) record(rec *trace.Record, t int64, n int, carry *int) {
	e := &st.ev
	if st.finished {
		// Past the first finish: keep it, note what still came.
		st.lateText += len(e.text) + len(e.reasoning)
		if e.hasFinish && string(e.finish) != string(st.finish) && len(st.lateFinish) < 4 && !slices.Contains(st.lateFinish, clip(e.finish, 40)) {
			st.lateFinish = append(st.lateFinish, clip(e.finish, 40))
		}
	} else if e.hasFinish {
		st.finish = append(st.finish[:0], e.finish...)
		st.finished = true
	}
	st.textBytes += len(e.text) + len(e.reasoning)
	if len(e.text) == 0 && len(e.reasoning) == 0 && e.tokens == 0 && !e.hasFinish && !e.usageChunk && !e.role {
		*carry += n
		return
	}
	if rec.Chunks == nil && rec.MaxTokens > 0 && rec.MaxTokens <= maxPrealloc {
		// Usually one chunk per token plus the role, finish and usage
		// chunks: one allocation instead of a dozen as the slice grows.
		rec.Chunks = make([]trace.Chunk, 0, rec.MaxTokens+4)
		// The texts' spans (one per chunk) and bytes likewise: a pooled
		// state keeps what it grew to, but when more streams run at once
		// than the pool holds (every first wave), a fresh state grew them
		// from nothing, a dozen allocations and copies per response.
		// Up to textPrealloc tokens' worth: past it, a short answer to a
		// large max_tokens would hold memory it never uses.
		if n := min(rec.MaxTokens, textPrealloc) + 4; cap(st.spans) < n {
			st.spans = make([]span, 0, n)
		}
		if n := textPerToken * (min(rec.MaxTokens, textPrealloc) + 4); cap(st.text) < n {
			st.text = make([]byte, 0, n)
		}
	}
	if len(e.text)+len(e.reasoning) > 0 {
		st.spans = append(st.spans, span{chunk: len(rec.Chunks), off: len(st.text), text: len(e.text), reasoning: len(e.reasoning)})
		st.text = append(st.text, e.text...)
		st.text = append(st.text, e.reasoning...)
	}
	rec.Chunks = append(rec.Chunks, trace.Chunk{T: t, Bytes: n + *carry, Tokens: e.tokens, ServerT: e.serverT})
	*carry = 0
}

// span is where one chunk's text and reasoning are in state.text.
type span struct{ chunk, off, text, reasoning int }

// texts gives every chunk its text and reasoning, as parts of one string
// made once per response: a string per chunk was the chunk path's only
// allocation per event.
func (st *state) texts(rec *trace.Record) {
	if len(st.spans) == 0 {
		return
	}
	all := string(st.text)
	for _, sp := range st.spans {
		c := &rec.Chunks[sp.chunk]
		if sp.text > 0 {
			c.Text = all[sp.off : sp.off+sp.text]
		}
		if sp.reasoning > 0 {
			c.Reasoning = all[sp.off+sp.text : sp.off+sp.text+sp.reasoning]
		}
	}
}

func isDone(data []byte) bool {
	// An event is JSON, so its first byte tells at once.
	return len(data) >= 6 && (data[0] == '[' || data[0] <= ' ') && string(bytes.TrimSpace(data)) == "[DONE]"
}

// finishString interns the common finish reasons.
func finishString(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	}
	return string(b)
}

// maxPrealloc bounds the chunk slice made up front from MaxTokens, so a
// huge max_tokens does not reserve memory a short answer never uses.
const maxPrealloc = 4096

// textPrealloc bounds the tokens whose texts' spans and bytes a response
// makes room for up front (textPerToken bytes each: a typical token is
// 3–5; longer texts grow the buffer as before).
const (
	textPrealloc = 1024
	textPerToken = 4
)

const (
	bodyMax = 4 << 10 // trace.Error.Body holds at most this
	msgMax  = 300     // an error message quotes at most this much
)

// clip returns at most n bytes from the start of b as valid UTF-8, for an
// error's Body or message.
func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	for len(s) > n { // replacement characters are longer than the bytes they replace
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// oneLine makes server text fit an error message: valid UTF-8, no line
// breaks, bounded length.
func oneLine(b []byte) string {
	s := clip(b, msgMax)
	s = strings.Join(strings.Fields(s), " ")
	if len(b) > msgMax {
		s += " …"
	}
	return s
}

func malformed(msg string, data []byte) *trace.Error {
	e := &trace.Error{Class: trace.ErrMalformed, Message: msg}
	if data != nil {
		e.Body = clip(data, bodyMax)
	}
	return e
}

// syntaxError reports data that is not JSON.
func (st *state) syntaxError(data []byte) *trace.Error {
	return malformed(fmt.Sprintf("event data is not JSON (%s at byte %d): %q", st.js.err, st.js.errAt, clip(data, 80)), data)
}

// shapeError reports JSON of the wrong shape for the API.
func (st *state) shapeError(data []byte, what string) *trace.Error {
	return malformed(fmt.Sprintf("event data is JSON of the wrong shape (%s): %q", what, clip(data, 80)), data)
}

func (st *state) serverError(data []byte, where string) *trace.Error {
	msg := st.ev.errMsg
	if len(msg) == 0 {
		msg = data
	}
	return &trace.Error{Class: trace.ErrServer,
		Message: fmt.Sprintf("the server sent %s in a 200 stream: %s", where, oneLine(msg)),
		Body:    clip(data, bodyMax)}
}

// errorMessage reads an "error" value: a string, or an object whose
// "message" is the text (OpenAI, vLLM, SGLang, llama.cpp), or anything else
// taken as it is.
func (st *state) errorMessage() []byte {
	s := &st.js
	switch s.peek() {
	case '"':
		v, _, _ := s.str(&st.mbuf)
		return v
	case '{':
		start := s.i
		s.enter('{')
		var msg []byte
		for n := 0; ; n++ {
			k, ok := s.key(n)
			if !ok {
				break
			}
			if string(k) == "message" {
				if v, null, ok := s.str(&st.mbuf); ok {
					if !null {
						msg = v
					}
					continue
				}
			}
			s.skip()
		}
		if len(msg) == 0 && s.err == "" {
			msg = s.b[start:s.i]
		}
		return msg
	}
	return s.raw()
}

// errorObject reads the rest of an object sent as an error event: its
// "message", or the message of its "error"; nil if it has neither.
func (st *state) errorObject() []byte {
	s := &st.js
	var msg []byte
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		switch string(k) {
		case "message":
			if v, null, ok := s.str(&st.mbuf); ok {
				if !null && len(msg) == 0 {
					msg = v
				}
				continue
			}
		case "error":
			if v := st.errorMessage(); len(v) > 0 {
				msg = v
			}
			continue
		}
		s.skip()
	}
	if s.err != "" {
		return nil
	}
	return msg
}

// serverTime reads the simulator's send time (sim_sent_unix_ns).
func (st *state) serverTime() int64 {
	num, ok := st.js.number()
	if !ok {
		st.js.skip()
		return 0
	}
	if v, ok := atoi(num); ok {
		return v
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return 0
	}
	return int64(f)
}

// top starts reading an event's data, which must be one JSON object.
func (st *state) top(data []byte) *trace.Error {
	s := &st.js
	s.reset(data)
	switch c := s.peek(); {
	case c == '{':
		s.enter('{')
		return nil
	case c == 0:
		return malformed("an event with no data", data)
	case c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' || c == '-' || c >= '0' && c <= '9':
		s.skip()
		if s.end(); s.err != "" {
			return st.syntaxError(data)
		}
		return st.shapeError(data, "not an object")
	}
	return malformed(fmt.Sprintf("event data is not JSON: %q", clip(data, 80)), data)
}

// done finishes reading an event's data: only white space may follow.
func (st *state) done(data []byte) *trace.Error {
	st.js.end()
	if st.js.err != "" {
		return st.syntaxError(data)
	}
	return nil
}
