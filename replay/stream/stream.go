// Package stream splits a streamed HTTP response body into events: Server-Sent
// Events (the WHATWG HTML "event stream" format) or NDJSON (one JSON value per
// line). Every endpoint adapter reads through this one parser, so the framing
// rules live in one place.
//
// The parser reads from the body itself so that it can time-stamp each event
// with the arrival time of the read that delivered the event's last byte:
// now() is called immediately after each Read returns, before any byte is
// looked at. Buffers are reused, so a steady stream costs no allocation per
// event; an event's Data is valid only until the next call to Next.
//
// Deviations from the SSE specification, all in the direction of losing
// nothing a benchmark needs:
//   - bytes are passed through as they came, not decoded as UTF-8 with
//     replacement characters (a NUL or an invalid sequence stays as sent);
//   - an event cut off by the end of the stream is delivered with Partial set
//     rather than discarded, so the caller can tell "the last event was
//     complete JSON but lacked its blank line" from "the stream was cut";
//   - a default event type is reported as "" rather than "message".
package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Format is a stream's framing.
type Format int

const (
	// SSE is text/event-stream: "field: value" lines, a blank line ends an event.
	SSE Format = iota
	// NDJSON is one JSON value per line (Ollama's streaming format).
	NDJSON
)

func (f Format) String() string {
	switch f {
	case SSE:
		return "SSE"
	case NDJSON:
		return "NDJSON"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// DefaultMaxEventSize bounds one line and one event's data when
// Options.MaxEventSize is 0. No legitimate streamed event comes near it; it
// exists so a hostile or broken server costs an error, not the machine's memory.
const DefaultMaxEventSize = 16 << 20

// DefaultBufferSize is the initial read buffer. A streamed LLM event is a few
// hundred bytes, and ten thousand concurrent streams each hold one buffer, so
// it starts small and grows (up to the event limit) only for long lines.
const DefaultBufferSize = 4 << 10

// ErrTooLarge is returned (wrapped) by Err when a line or an event's data
// exceeds the maximum event size.
var ErrTooLarge = errors.New("stream: event too large")

// Options configure a Parser. The zero value is valid.
type Options struct {
	// MaxEventSize bounds a line and an event's data in bytes;
	// 0 means DefaultMaxEventSize.
	MaxEventSize int
	// BufferSize is the initial read buffer in bytes; 0 means DefaultBufferSize.
	BufferSize int
	// Sniff decides the format from the first byte of the stream that is not
	// white space (or a byte-order mark): '{' or '[' means NDJSON, anything
	// else SSE. A server that answers in the other format, or with one plain
	// JSON document, is then still read instead of silently yielding nothing.
	Sniff bool
	// Fields names line fields outside the SSE specification that are
	// delivered at once as an event of their own, with Name the field and
	// Data the value: llama.cpp's server sends its errors as
	// "error: {...}" lines, which a strict parser would drop.
	Fields []string
}

// Event is one dispatched SSE event or one NDJSON line.
type Event struct {
	// Data is the event's data: SSE data lines joined with "\n", or the
	// NDJSON line without its line ending. Valid until the next call to Next.
	Data []byte
	// Name is the SSE event type ("" when the event had no event: field).
	// Always "" for NDJSON.
	Name string
	// ID is the SSE last-event-ID buffer at dispatch. Valid until the next
	// call to Next.
	ID []byte
	// T is now() as returned right after the read that delivered the
	// event's last byte (for SSE, the blank line that dispatched it).
	T int64
	// Bytes counts the wire bytes consumed since the previous event up to
	// and including this one's terminator: comments, keep-alive blank lines
	// and ignored lines are charged to the event that follows them, so the
	// Bytes of all events add up to the stream's length.
	Bytes int
	// Partial is set on an event the stream ended inside of: an SSE event
	// without its closing blank line, or an NDJSON line without its newline.
	// A strict SSE client would discard it.
	Partial bool
}

// Parser splits a byte stream into events. It is not safe for concurrent use.
type Parser struct {
	r      io.Reader
	now    func() int64
	max    int
	bufMin int

	format  Format
	sniff   bool // the format is still to be decided from the first bytes
	bomDone bool // a leading byte-order mark has been looked for

	buf        []byte // unread bytes are buf[start:end]
	start, end int
	eof        bool
	err        error
	t          int64 // now() after the latest read
	skipLF     bool  // the previous line ended in CR: an LF right after belongs to it
	scanned    int   // buf[start:start+scanned] is known to hold no line ending
	pending    int   // bytes consumed since the previous event

	// SSE event being assembled. An event of one data line (the usual
	// case) is not copied: alias is that line's value in buf, until a
	// second line or a fill that would move buf makes it a copy in data.
	data     []byte
	alias    []byte
	aliased  bool
	hasData  bool
	name     []byte
	lastName string // interned event type, so a repeated "event: x" costs nothing
	id       []byte
	retry    int64
	hasRetry bool

	ignored      int
	firstIgnored string
	fields       []string
	field        bool // the event being dispatched is a line of one of fields

	ev Event
}

// NewSSE returns a parser for a text/event-stream body.
func NewSSE(r io.Reader, now func() int64, o Options) *Parser {
	p := &Parser{}
	p.Reset(r, now, SSE, o)
	return p
}

// NewNDJSON returns a parser for a newline-delimited JSON body.
func NewNDJSON(r io.Reader, now func() int64, o Options) *Parser {
	p := &Parser{}
	p.Reset(r, now, NDJSON, o)
	return p
}

// Reset makes p read a new stream in format f (the format sniffing starts
// from, or keeps, depending on o.Sniff), keeping its buffers unless they
// grew large. Reset(nil, nil, SSE, Options{}) lets go of the reader.
func (p *Parser) Reset(r io.Reader, now func() int64, f Format, o Options) {
	max := o.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	bufMin := o.BufferSize
	if bufMin <= 0 {
		bufMin = DefaultBufferSize
	}
	*p = Parser{
		r: r, now: now, max: max, bufMin: bufMin,
		format: f, sniff: o.Sniff, fields: o.Fields,
		buf: keep(p.buf), data: keep(p.data), name: keep(p.name), id: keep(p.id),
		lastName: p.lastName,
	}
}

// keepMax is the largest buffer Reset keeps: one grown for a rare long line
// is dropped so that a pooled parser does not pin it.
const keepMax = 64 << 10

func keep(b []byte) []byte {
	if cap(b) > keepMax {
		return nil
	}
	return b[:0]
}

// Format is the stream's framing: the one asked for, or the one sniffed once
// the first non-blank byte has been seen.
func (p *Parser) Format() Format { return p.format }

// Event returns the event Next found. The pointer and the slices it holds are
// valid until the next call to Next.
func (p *Parser) Event() *Event { return &p.ev }

// Err returns the first error other than io.EOF: a read error as the reader
// returned it, or an error wrapping ErrTooLarge.
func (p *Parser) Err() error { return p.err }

// Retry returns the reconnection time in milliseconds from the latest valid
// SSE retry: field, if there was one.
func (p *Parser) Retry() (ms int64, ok bool) { return p.retry, p.hasRetry }

// Ignored returns how many SSE lines named a field the format does not know,
// and the start of the first one: a body that yields no event but has
// ignored lines was most likely not SSE at all.
func (p *Parser) Ignored() (n int, first string) { return p.ignored, p.firstIgnored }

// Next advances to the next event and reports whether there is one. It
// returns false at the end of the stream or on an error (see Err).
func (p *Parser) Next() bool {
	p.ev = Event{}
	for {
		for {
			line, ok := p.line()
			if !ok {
				break
			}
			if p.process(line) {
				p.dispatch(false)
				return true
			}
			if p.err != nil {
				return false
			}
		}
		if p.err != nil {
			return false
		}
		if p.eof {
			return p.finish()
		}
		p.fill()
	}
}

// line returns the next complete line in the buffer without its ending and
// consumes it, or false if the buffer holds no complete line.
func (p *Parser) line() ([]byte, bool) {
	if p.skipLF && p.start < p.end {
		p.skipLF = false
		if p.buf[p.start] == '\n' {
			p.start++
			p.pending++
		}
	}
	if !p.bomDone && !p.skipBOM() {
		return nil, false
	}
	if p.sniff && !p.decide() {
		return nil, false
	}
	b := p.buf[p.start:p.end]
	// Bytes already searched are not searched again, so a long line
	// trickling in a byte per read costs linear, not quadratic, time.
	from := p.scanned
	i := bytes.IndexByte(b[from:], '\n')
	if i >= 0 {
		i += from
	}
	n := 1 // length of the line ending
	if p.format == SSE {
		// SSE also ends lines with a lone CR; NDJSON only with LF (a CR
		// before it is trimmed below).
		limit := b[from:]
		if i >= 0 {
			limit = b[from:i]
		}
		if j := bytes.IndexByte(limit, '\r'); j >= 0 {
			j += from
			i = j
			switch {
			case j+1 < len(b) && b[j+1] == '\n':
				n = 2
			case j+1 == len(b):
				p.skipLF = true // the LF, if any, is in the next read
			}
		}
	}
	if i < 0 {
		p.scanned = len(b)
		if len(b) > p.max {
			p.err = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLarge, p.max)
		}
		return nil, false
	}
	if i > p.max {
		p.err = fmt.Errorf("%w: a line of %d bytes, the limit is %d", ErrTooLarge, i, p.max)
		return nil, false
	}
	p.scanned = 0
	p.start += i + n
	p.pending += i + n
	return b[:i], true
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// skipBOM drops a UTF-8 byte-order mark at the very start of the stream, as
// the SSE specification asks. It reports false if more bytes are needed.
func (p *Parser) skipBOM() bool {
	b := p.buf[p.start:p.end]
	if len(b) < len(bom) && bytes.HasPrefix(bom, b) && !p.eof {
		return false
	}
	if bytes.HasPrefix(b, bom) {
		p.start += len(bom)
		p.pending += len(bom)
	}
	p.bomDone = true
	return true
}

// decide sniffs the format from the first byte that is not white space. It
// reports false if more bytes are needed.
func (p *Parser) decide() bool {
	b := p.buf[p.start:p.end]
	for _, c := range b[p.scanned:] {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			p.format = NDJSON
		default:
			p.format = SSE
		}
		p.sniff = false
		p.scanned = 0
		return true
	}
	p.scanned = len(b)
	if p.eof {
		p.sniff = false
		p.scanned = 0
		return true
	}
	// Only white space so far. Lines that end in LF are blank in either
	// format and can go; what follows the last LF waits for the deciding
	// byte, so a stream of keep-alive newlines cannot fill the buffer.
	if k := bytes.LastIndexByte(b, '\n'); k >= 0 {
		p.start += k + 1
		p.pending += k + 1
		p.scanned -= k + 1
	}
	return false
}

// process handles one line and reports whether it completed an event.
func (p *Parser) process(line []byte) bool {
	if p.format == NDJSON {
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if blank(line) {
			return false
		}
		p.ev.Data = line
		return true
	}
	return p.sseLine(line)
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// sseLine interprets one SSE line.
func (p *Parser) sseLine(line []byte) bool {
	if len(line) == 0 {
		if !p.hasData {
			// An event with no data is not dispatched; its type is forgotten.
			p.name = p.name[:0]
			return false
		}
		p.ev.Data = p.eventData()
		return true
	}
	var field, value []byte
	switch i := bytes.IndexByte(line, ':'); {
	case i == 0:
		return false // comment
	case i < 0:
		field = line
	default:
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if !p.hasData {
			// len(value) is within the line bound, which is the event's.
			p.alias, p.aliased, p.hasData = value, true, true
			break
		}
		p.unalias()
		if len(p.data)+1+len(value) > p.max {
			p.err = fmt.Errorf("%w: an event's data exceeds %d bytes", ErrTooLarge, p.max)
			return false
		}
		p.data = append(p.data, '\n')
		p.data = append(p.data, value...)
	case "event":
		p.name = append(p.name[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.id = append(p.id[:0], value...)
		}
	case "retry":
		if ms, ok := digits(value); ok {
			p.retry, p.hasRetry = ms, true
		}
	default:
		for _, f := range p.fields {
			if string(field) == f {
				p.ev.Data, p.ev.Name, p.field = value, f, true
				return true
			}
		}
		if p.ignored == 0 {
			const keep = 64
			s := line
			if len(s) > keep {
				s = s[:keep]
			}
			p.firstIgnored = string(s)
		}
		p.ignored++
	}
	return false
}

// unalias copies an aliased data line into data, before buf changes or a
// second line is added.
func (p *Parser) unalias() {
	if p.aliased {
		p.data = append(p.data[:0], p.alias...)
		p.alias, p.aliased = nil, false
	}
}

// eventData is the data of the event being assembled.
func (p *Parser) eventData() []byte {
	if p.aliased {
		return p.alias
	}
	return p.data
}

// digits parses a retry: value, which the spec requires to be ASCII digits
// only (ParseUint takes no sign; base 10 takes no underscores).
func digits(b []byte) (int64, bool) {
	if len(b) > 18 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b), 10, 63)
	return int64(n), err == nil
}

// dispatch completes p.ev (Data already set) and resets the SSE event state.
func (p *Parser) dispatch(partial bool) {
	p.ev.T = p.t
	p.ev.Bytes = p.pending
	p.ev.Partial = partial
	p.pending = 0
	if p.field {
		p.field = false // the event being assembled, if any, goes on
		return
	}
	if p.format == SSE {
		p.ev.ID = p.id
		if len(p.name) > 0 {
			if string(p.name) != p.lastName {
				p.lastName = string(p.name)
			}
			p.ev.Name = p.lastName
		}
		// Data aliases p.data or buf until the next call; truncating keeps
		// the backing array for the next event.
		p.data = p.data[:0]
		p.alias, p.aliased, p.hasData = nil, false, false
		p.name = p.name[:0]
	}
}

// finish handles the end of the stream: an unterminated last line, and an
// event still being assembled, are delivered with Partial set.
func (p *Parser) finish() bool {
	if p.start < p.end {
		line := p.buf[p.start:p.end]
		if len(line) > p.max {
			p.err = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLarge, p.max)
			return false
		}
		p.pending += len(line)
		p.start, p.scanned = p.end, 0
		if p.process(line) {
			p.dispatch(true)
			return true
		}
		if p.err != nil {
			return false
		}
	}
	if p.format == SSE && p.hasData {
		p.ev.Data = p.eventData()
		p.dispatch(true)
		return true
	}
	return false
}

// fill reads more bytes, growing the buffer only when a single line fills it.
func (p *Parser) fill() {
	p.unalias() // the line it points to is about to move
	if p.start > 0 {
		p.end = copy(p.buf, p.buf[p.start:p.end])
		p.start = 0
	}
	if cap(p.buf) == 0 {
		p.buf = make([]byte, p.bufMin)
	}
	p.buf = p.buf[:cap(p.buf)]
	if p.end == len(p.buf) {
		// Room for the longest allowed line plus a CRLF, no more.
		n := min(2*len(p.buf), p.max+2)
		if n <= len(p.buf) {
			p.err = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLarge, p.max)
			return
		}
		nb := make([]byte, n)
		copy(nb, p.buf[:p.end])
		p.buf = nb
	}
	for empty := 0; ; empty++ {
		n, err := p.r.Read(p.buf[p.end:])
		t := p.now()
		p.end += n
		if n > 0 {
			p.t = t
		}
		if err != nil {
			if err == io.EOF {
				p.eof = true
			} else {
				p.err = err
			}
			return
		}
		if n > 0 {
			return
		}
		if empty >= 100 {
			p.err = io.ErrNoProgress
			return
		}
	}
}
