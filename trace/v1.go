package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Version 1 record bodies. This file is the 1.x codec and stays forever:
// a later major version gets its own file and decoder, and the reader picks
// the decoder by the file's major version.
//
// A body is varints and length-prefixed strings in a fixed order, with the
// chunks stored column by column (all time deltas, then all byte counts,
// then all text lengths, …, then all text bytes). Columns put similar bytes
// next to each other, which is what lets zstd shrink a count-up trace to a
// few bytes per token. docs/TRACE_FORMAT.md lists the fields byte by byte.
// Later minor versions only append fields at the end of a body; a 1.0
// reader ignores bytes after the fields it knows.

// appendRecordV1 appends r's v1 body to b.
func appendRecordV1(b []byte, r *Record) []byte {
	var flags uint64
	if r.Warmup {
		flags |= flagWarmup
	}
	if r.Error != nil {
		flags |= flagError
	}
	if r.UserTimes {
		flags |= flagUserTimes
	}
	for i := range r.Chunks {
		c := &r.Chunks[i]
		if c.Reasoning != "" {
			flags |= flagReasoning
		}
		if c.Tokens != 0 {
			flags |= flagTokens
		}
		if c.ServerT != 0 {
			flags |= flagServerT
		}
	}

	b = appendString(b, r.ID)
	b = binary.AppendVarint(b, int64(r.Index))
	b = binary.AppendVarint(b, int64(r.Phase))
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, int64(r.InputTokens))
	b = binary.AppendVarint(b, int64(r.MaxTokens))
	// Times relative to each other: small numbers, and lossless even when
	// a time is 0 ("did not happen") because the reader adds back exactly
	// what was subtracted (wrapping int64 arithmetic).
	b = binary.AppendVarint(b, r.Scheduled)
	b = binary.AppendVarint(b, r.Sent-r.Scheduled)
	b = binary.AppendVarint(b, r.Headers-r.Sent)
	b = binary.AppendVarint(b, r.Done-r.Sent)
	b = binary.AppendVarint(b, int64(r.Status))
	b = appendString(b, r.FinishReason)
	b = appendString(b, r.Usage)
	b = appendString(b, r.Timings)
	if r.Error != nil {
		b = appendString(b, string(r.Error.Class))
		b = appendString(b, r.Error.Message)
		b = appendString(b, r.Error.Body)
	}

	n := len(r.Chunks)
	b = binary.AppendUvarint(b, uint64(n))
	prev := r.Sent
	for i := range r.Chunks {
		b = binary.AppendVarint(b, r.Chunks[i].T-prev)
		prev = r.Chunks[i].T
	}
	// Wire bytes minus the text they carried: the framing around a token is
	// nearly constant for a given server, so this column compresses to
	// almost nothing.
	for i := range r.Chunks {
		c := &r.Chunks[i]
		b = binary.AppendVarint(b, int64(c.Bytes)-int64(len(c.Text))-int64(len(c.Reasoning)))
	}
	for i := range r.Chunks {
		b = binary.AppendUvarint(b, uint64(len(r.Chunks[i].Text)))
	}
	if flags&flagReasoning != 0 {
		for i := range r.Chunks {
			b = binary.AppendUvarint(b, uint64(len(r.Chunks[i].Reasoning)))
		}
	}
	if flags&flagTokens != 0 {
		for i := range r.Chunks {
			b = binary.AppendVarint(b, int64(r.Chunks[i].Tokens))
		}
	}
	if flags&flagServerT != 0 {
		for i := range r.Chunks {
			b = binary.AppendVarint(b, r.Chunks[i].ServerT-r.Chunks[i].T)
		}
	}
	for i := range r.Chunks {
		b = append(b, r.Chunks[i].Text...)
	}
	if flags&flagReasoning != 0 {
		for i := range r.Chunks {
			b = append(b, r.Chunks[i].Reasoning...)
		}
	}
	// 1.2 fields, only when set (or when 1.3 fields follow them): a record
	// without them is byte for byte a 1.1 record.
	userT := false
	for i := range r.Chunks {
		if r.Chunks[i].UserT != 0 {
			userT = true
			break
		}
	}
	// A column a reader would drop whole (a delay below 0 or past
	// MaxUserDelay: times moved apart, a chunk without its time) is not
	// written: the summary goes in its place.
	for i := 0; userT && i < len(r.Chunks); i++ {
		if d := r.Chunks[i].UserT - r.Chunks[i].T; d < 0 || d > MaxUserDelay {
			userT = false
		}
	}
	// 1.6: the chunks read late, only when there are some.
	late := 0
	for i := range r.Chunks {
		if r.Chunks[i].ReadLate {
			late++
		}
	}
	// 1.5: without the column, the delays' summary (a column, when
	// written, holds it already); written as zeros when only 1.6's fields
	// follow.
	summary := !userT && (r.UserDelayMean != 0 || r.UserDelayMax != 0 || late > 0)
	v14 := r.Session != "" || r.Turn != 0 || r.SentInputTokens != 0 || userT || summary
	v13 := r.ServerPromptTokens != 0 || r.ServerTextTokens != 0 || v14
	if r.Clipped != 0 || r.Notes != "" || v13 {
		b = binary.AppendVarint(b, r.Clipped)
		b = appendString(b, r.Notes)
	}
	// 1.3 fields, only when set: the server tokenizer's counts.
	if v13 {
		b = binary.AppendVarint(b, int64(r.ServerPromptTokens))
		b = binary.AppendVarint(b, int64(r.ServerTextTokens))
	}
	// 1.4 fields, only when set: the conversation's session and turn, and
	// the prompt's length as sent.
	if v14 {
		b = appendString(b, r.Session)
		b = binary.AppendVarint(b, int64(r.Turn))
		b = binary.AppendVarint(b, int64(r.SentInputTokens))
	}
	// 1.4, after them, only when chunk times are kernel stamps: each
	// chunk's user-space time, as its delay after the stamp.
	if userT {
		for i := range r.Chunks {
			b = binary.AppendVarint(b, r.Chunks[i].UserT-r.Chunks[i].T)
		}
	} else if summary {
		// A column's values are never negative: −1 in its place is no
		// column, which a 1.4 reader ignores whole; 1.5's summary follows.
		b = binary.AppendVarint(b, userDelayMarker)
		b = binary.AppendVarint(b, r.UserDelayMean)
		b = binary.AppendVarint(b, r.UserDelayMax)
	}
	// 1.6, after them, only when some chunk was read late: how many, the
	// index of each (the first as is, the others as the distance from the
	// one before) and the largest delay.
	if late > 0 {
		b = binary.AppendUvarint(b, uint64(late))
		prev := 0
		for i := range r.Chunks {
			if r.Chunks[i].ReadLate {
				b = binary.AppendUvarint(b, uint64(i-prev))
				prev = i
			}
		}
		// A delay is at most MaxUserDelay: a reader takes no larger one.
		b = binary.AppendVarint(b, min(max(r.ReadLateMax, 0), MaxUserDelay))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// v1Decoder decodes v1 bodies into one reused Record, chunk slice and Error,
// so a scan allocates once per record (the body string every text is a
// slice of) and not once per chunk.
type v1Decoder struct {
	rec    Record
	err    Error
	chunks []Chunk
	lens   []int // text lengths, then reasoning lengths, of the current record
	count  int   // records decoded so far, for errors
}

// cursor reads varints and strings from a body. Errors are sticky: callers
// read a group of fields and check err once, and every read after the first
// error returns zero values, so no read can go out of bounds.
type cursor struct {
	s   string
	i   int
	err error
}

func (c *cursor) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.i = len(c.s)
}

// uvarint decodes the short varints that make up nearly every body (a time
// delta under 268 ms takes 4 bytes) without a loop; longer ones, and the
// last bytes of a body, take the general path.
func (c *cursor) uvarint() uint64 {
	if len(c.s)-c.i >= 4 {
		p := c.s[c.i : c.i+4]
		b0 := p[0]
		if b0 < 0x80 {
			c.i++
			return uint64(b0)
		}
		x := uint64(b0 & 0x7f)
		b1 := p[1]
		if b1 < 0x80 {
			c.i += 2
			return x | uint64(b1)<<7
		}
		x |= uint64(b1&0x7f) << 7
		b2 := p[2]
		if b2 < 0x80 {
			c.i += 3
			return x | uint64(b2)<<14
		}
		x |= uint64(b2&0x7f) << 14
		b3 := p[3]
		if b3 < 0x80 {
			c.i += 4
			return x | uint64(b3)<<21
		}
	}
	return c.uvarintSlow()
}

func (c *cursor) uvarintSlow() uint64 {
	var x uint64
	var shift uint
	for k := 0; ; k++ {
		if c.i >= len(c.s) {
			c.fail(errShort)
			return 0
		}
		b := c.s[c.i]
		c.i++
		if b < 0x80 {
			if k == 9 && b > 1 {
				c.fail(errors.New("varint overflows 64 bits"))
				return 0
			}
			return x | uint64(b)<<shift
		}
		if k == 9 {
			c.fail(errors.New("varint overflows 64 bits"))
			return 0
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
}

func (c *cursor) varint() int64 {
	u := c.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// length reads a uvarint that counts bytes still to come in this body, and
// refuses one larger than what is left, so a corrupt 2^62 never reaches
// make or a slice expression.
func (c *cursor) length() int {
	u := c.uvarint()
	if u > uint64(len(c.s)-c.i) {
		c.fail(fmt.Errorf("length %d exceeds the %d bytes left in the record", u, len(c.s)-c.i))
		return 0
	}
	return int(u)
}

func (c *cursor) str() string {
	n := c.length()
	s := c.s[c.i : c.i+n]
	c.i += n
	return s
}

// decode parses body into d.rec and returns it. The returned record, its
// chunks and its error are reused by the next call.
func (d *v1Decoder) decode(body string) (*Record, error) {
	c := cursor{s: body}
	r := &d.rec
	*r = Record{}
	r.ID = c.str()
	r.Index = int(c.varint())
	r.Phase = int(c.varint())
	flags := c.uvarint()
	r.Warmup = flags&flagWarmup != 0
	r.UserTimes = flags&flagUserTimes != 0
	r.InputTokens = int(c.varint())
	r.MaxTokens = int(c.varint())
	r.Scheduled = c.varint()
	r.Sent = r.Scheduled + c.varint()
	r.Headers = r.Sent + c.varint()
	r.Done = r.Sent + c.varint()
	r.Status = int(c.varint())
	r.FinishReason = c.str()
	r.Usage = c.str()
	r.Timings = c.str()
	if flags&flagError != 0 {
		d.err = Error{Class: ErrorClass(c.str()), Message: c.str(), Body: c.str()}
		r.Error = &d.err
	}
	// Every chunk takes at least one byte in each of its columns, so a count
	// larger than the rest of the body is corrupt; checking it here bounds
	// the allocation below by the body size.
	n := c.length()
	if c.err != nil {
		return nil, c.err
	}
	if n == 0 {
		d.later(r, &c)
		return r, nil
	}
	if cap(d.chunks) < n {
		d.chunks = make([]Chunk, n, n+n/4)
	}
	chunks := d.chunks[:n]
	nl := n
	if flags&flagReasoning != 0 {
		nl = 2 * n
	}
	if cap(d.lens) < nl {
		d.lens = make([]int, nl, nl+nl/4)
	}
	lens := d.lens[:nl]

	// Fields are set one by one rather than by assigning a Chunk literal:
	// copying a struct with strings in it costs a GC write barrier per
	// chunk, and the text fields are all set below anyway.
	t := r.Sent
	for i := range chunks {
		t += c.varint()
		chunks[i].T = t
		chunks[i].UserT = 0        // set by later when present
		chunks[i].ReadLate = false // likewise
	}
	for i := range chunks {
		chunks[i].Bytes = int(c.varint())
	}
	textBytes := 0
	for i := range lens {
		l := c.length()
		lens[i] = l
		textBytes += l // each l ≤ len(body), n ≤ len(body): no overflow
	}
	if flags&flagTokens != 0 {
		for i := range chunks {
			chunks[i].Tokens = int(c.varint())
		}
	} else {
		for i := range chunks {
			chunks[i].Tokens = 0
		}
	}
	if flags&flagServerT != 0 {
		for i := range chunks {
			chunks[i].ServerT = chunks[i].T + c.varint()
		}
	} else {
		for i := range chunks {
			chunks[i].ServerT = 0
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	if textBytes > len(c.s)-c.i {
		return nil, fmt.Errorf("chunk texts need %d bytes but the record has %d left", textBytes, len(c.s)-c.i)
	}
	p := c.i
	for i := range chunks {
		l := lens[i]
		chunks[i].Text = body[p : p+l]
		chunks[i].Bytes += l
		p += l
	}
	if flags&flagReasoning != 0 {
		for i := range chunks {
			l := lens[n+i]
			chunks[i].Reasoning = body[p : p+l]
			chunks[i].Bytes += l
			p += l
		}
	} else {
		for i := range chunks {
			if chunks[i].Reasoning != "" {
				chunks[i].Reasoning = ""
			}
		}
	}
	r.Chunks = chunks
	c.i = p
	d.later(r, &c)
	return r, nil
}

// later reads the fields later minor versions appended after the chunks
// (1.2: clipped_bytes, notes; 1.3: server_prompt_tokens,
// server_text_tokens; 1.4: session, turn, sent_input_tokens, then the
// chunks' user-space times; 1.5: in their place, the marker and the
// delays' mean and largest). A body that ends first is an older
// version's; bytes after them belong to a version later still, and bytes
// that do not parse as them are ignored as such, as a 1.0 reader ignores
// every one of them.
func (d *v1Decoder) later(r *Record, c *cursor) {
	if c.i >= len(c.s) {
		return
	}
	clipped := c.varint()
	notes := c.str()
	if c.err != nil || clipped < 0 {
		return
	}
	r.Clipped, r.Notes = clipped, notes
	if c.i >= len(c.s) {
		return
	}
	prompt, text := c.varint(), c.varint()
	// A count outside int32 is no count (and would not fit an int on
	// every platform): leave both unknown, as a 1.2 reader would.
	if c.err != nil || !countRange(prompt) || !countRange(text) {
		return
	}
	r.ServerPromptTokens, r.ServerTextTokens = int(prompt), int(text)
	if c.i >= len(c.s) {
		return
	}
	session := c.str()
	turn, sent := c.varint(), c.varint()
	// Values past what a workload can hold are no session: leave them
	// unset, as a 1.3 reader would.
	if c.err != nil || len(session) > maxSessionBytes || turn < 0 || turn > 1<<31-1 || sent < 0 || sent > 1<<31-1 {
		return
	}
	r.Session, r.Turn, r.SentInputTokens = session, int(turn), int(sent)
	if c.i >= len(c.s) || len(r.Chunks) == 0 {
		return
	}
	// 1.5: no column, the delays' mean and largest instead. Values a
	// delay cannot have are no summary: left unset, as a 1.4 reader would.
	save := c.i
	if c.varint() == userDelayMarker && c.err == nil {
		mean, most := c.varint(), c.varint()
		if c.err == nil && mean >= 0 && most >= mean && most <= MaxUserDelay {
			r.UserDelayMean, r.UserDelayMax = mean, most
			readLate(r, c)
		}
		return
	}
	c.i, c.err = save, nil
	// Each chunk's user-space time as its delay after the kernel stamp,
	// which is never negative: a column that is not that is ignored
	// whole, as a reader before it would.
	var sum, most int64
	for i := range r.Chunks {
		d := c.varint()
		if c.err != nil || d < 0 || d > MaxUserDelay {
			for k := range r.Chunks[:i] {
				r.Chunks[k].UserT = 0
			}
			c.i = save
			return
		}
		r.Chunks[i].UserT = r.Chunks[i].T + d
		sum, most = sum+d, max(most, d)
	}
	r.UserDelayMean, r.UserDelayMax = sum/int64(len(r.Chunks)), most
	readLate(r, c)
}

// readLate reads 1.6's chunks read late, if the body goes on. Indices
// that do not name distinct chunks in order, or a count or delay that
// cannot be, are no marks: every mark is then left unset, as a 1.5
// reader would.
func readLate(r *Record, c *cursor) {
	if c.i >= len(c.s) {
		return
	}
	n := c.uvarint()
	if c.err != nil || n == 0 || n > uint64(len(r.Chunks)) {
		return
	}
	at := uint64(0)
	for k := uint64(0); k < n; k++ {
		d := c.uvarint()
		if (k > 0 && d == 0) || d >= uint64(len(r.Chunks)) {
			c.fail(errors.New("not a chunk index"))
		}
		at += d
		if c.err != nil || at >= uint64(len(r.Chunks)) {
			unmark(r)
			return
		}
		r.Chunks[at].ReadLate = true
	}
	most := c.varint()
	if c.err != nil || most < 0 || most > MaxUserDelay {
		unmark(r)
		return
	}
	r.ReadLate, r.ReadLateMax = int(n), most
}

func unmark(r *Record) {
	for i := range r.Chunks {
		r.Chunks[i].ReadLate = false
	}
}

// MaxUserDelay bounds a believable delay between a segment's kernel
// stamp and the read that returned it (1 h): beyond it the wall clock
// stepped or the value is garbage. Replay keeps no stamp past it, and the
// reader takes no delay past it, which also keeps a request's sum of
// delays far from overflowing.
const MaxUserDelay = int64(time.Hour)

// userDelayMarker in the place of the user-space times' column (field 35)
// says there is none and 1.5's summary of the delays follows.
const userDelayMarker = -1

// maxSessionBytes bounds a stored session id (a workload's are at most
// 128 bytes).
const maxSessionBytes = 1024

// countRange is whether a stored server count is −1 (unavailable) or a
// count that fits an int32.
func countRange(v int64) bool { return v >= TokenizeUnavailable && v <= 1<<31-1 }
