package endpoint

import (
	"bytes"
	"encoding/binary"

	"github.com/llmreplay/llmreplay/trace"
)

// An API's event is read by a table of the JSON members it cares about
// (fields), walked by one reader: what differs between APIs is the table
// and a short function that interprets what the walk captured, never the
// walking itself. Members the table does not name are skipped (and
// checked for syntax), so an API can add fields without breaking the
// reader.

// kind is what a field does with its value.
type kind uint8

const (
	// kText is a string (or null) of the event's answer text, read
	// without a copy unless it has escapes. It marks slot seen.
	kText kind = iota + 1
	// kReasoning is a string (or null) of reasoning text; the first
	// non-empty one of an event is kept (servers that send both
	// reasoning_content and reasoning send the same text twice).
	kReasoning
	// kStr captures a string into slot; null captures nothing.
	kStr
	// kBool captures a boolean into slot.
	kBool
	// kRaw captures any value into slot as sent (usage counts, timers).
	kRaw
	// kUsage keeps a whole value as the record's usage, as sent; null
	// keeps nothing. With sub, the value must be an object and its members
	// are also walked. It marks slot seen.
	kUsage
	// kTimings keeps a whole value as the record's timings, as sent; null
	// keeps nothing.
	kTimings
	// kObject walks an object's members by sub and marks slot seen; null
	// is skipped.
	kObject
	// kArray walks each element of an array as an object by sub (only the
	// first with first set); null is skipped. The count of elements goes
	// to the event's elems.
	kArray
	// kCount counts an array's elements as the event's token count.
	kCount
	// kError is an error object or string: the event is a server error
	// with its message. null is not an error.
	kError
	// kErrorText is an error object's message, kept for when another
	// field marks the event an error.
	kErrorText
	// kServerT is the simulator's send time in its test mode.
	kServerT
)

// nSlots bounds the captures of one event. Slot 0 is no slot: a field
// that captures nothing may mark it. Slot itemType is an item's type, for
// items arrays.
const (
	nSlots   = 8
	itemType = nSlots - 1
)

// field is one member an API reads.
type field struct {
	key  string
	kind kind
	slot uint8
	// lax skips a value of another type instead of calling the event
	// malformed: for members whose type the API does not fix.
	lax   bool
	first bool // kArray: only the first element counts (choices)
	// items, on a kArray field, makes each element an item whose text
	// is reasoning when its "type" (captured in slot itemType) starts
	// with "reasoning": a whole Responses object's output, where a
	// server may send the type before or after the content.
	items bool
	sub   *fields // kObject, kArray, kUsage: the members read inside
	key8  packed  // the key packed, set when the table is built
}

// fields is the table of one JSON object. path names the object in shape
// errors ("choices[0].delta"); it is "" for the event itself.
type fields struct {
	path string
	list []field
	// index finds a key's field with one comparison: index[h.of(key)] is
	// 1 + the field's position, or 0 for none. h is chosen when the table
	// is built so that no two fields share a slot. Most keys of an event
	// are not in the table (id, created, model, logprobs…), and an empty
	// slot tells so from the key's length and three of its bytes.
	index [64]uint8
	h     hasher
}

// hasher maps a key to an index slot from its length and its first,
// middle and last bytes: a few instructions on bytes the key scan just
// read.
type hasher struct{ first, length, mid, last uint }

func (h hasher) of(k []byte) int {
	n := len(k)
	return int((uint(k[0])*h.first + uint(n)*h.length + uint(k[n/2])*h.mid + uint(k[n-1])*h.last) & 63)
}

// A key is compared as machine words, not with a call to the runtime's
// memequal: lo holds its first 8 bytes, hi its last 8 (they overlap for
// keys of 8 to 16 bytes; hi is 0 below 8), and only the middle of a key
// longer than 16 bytes is compared byte by byte. A Go switch on constant
// strings compares inline in the same way; this keeps the table as fast.
type packed struct {
	lo, hi uint64
	n      int
}

func pack(k []byte) packed {
	n := len(k)
	switch {
	case n >= 8:
		return packed{binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:]), n}
	case cap(k) >= 8:
		// The key is followed by more of the event: load 8 bytes and keep
		// the key's.
		return packed{binary.LittleEndian.Uint64(k[:8]) & (1<<(8*n) - 1), 0, n}
	}
	return packShort(k)
}

// packShort packs a key of fewer than 8 bytes at the end of its buffer.
func packShort(k []byte) packed {
	var lo uint64
	for i := len(k) - 1; i >= 0; i-- {
		lo = lo<<8 | uint64(k[i])
	}
	return packed{lo, 0, len(k)}
}

// is reports whether p, packed from k, is f's key.
func (f *field) is(p packed, k []byte) bool {
	return p == f.key8 && (p.n <= 16 || string(k[8:p.n-8]) == f.key[8:p.n-8])
}

// indexed builds fs's index, with the first hasher that gives every field
// a slot of its own.
func (fs *fields) indexed() *fields {
	for i := range fs.list {
		fs.list[i].key8 = pack([]byte(fs.list[i].key))
	}
	for try := uint(0); try < 1<<16; try++ {
		fs.index, fs.h = [64]uint8{}, hasher{1 + try%16, 1 + try/16%16, try / 256 % 16, try / 4096}
		ok := true
		for i := range fs.list {
			h := fs.h.of([]byte(fs.list[i].key))
			ok = ok && fs.index[h] == 0
			fs.index[h] = uint8(1 + i)
		}
		if ok {
			return fs
		}
	}
	panic("endpoint: no hasher separates the keys of " + fs.path)
}

// shared are the members every API's events may carry at the top level:
// an error, and the simulator's send time in its test mode.
var shared = []field{{key: "error", kind: kError}, {key: "sim_sent_unix_ns", kind: kServerT}}

// top is the table of an event: the API's own members and the shared ones.
func top(list ...field) *fields {
	return (&fields{list: append(list, shared...)}).indexed()
}

// in is the table of an object inside an event, named path.
func in(path string, list ...field) *fields {
	return (&fields{path: path, list: list}).indexed()
}

// counted are fields that capture keys' values as sent in raw slots
// 1…len(keys), for counts gathers them.
func counted(keys ...string) []field {
	fs := make([]field, len(keys))
	for i, k := range keys {
		fs[i] = field{key: k, kind: kRaw, slot: uint8(1 + i)}
	}
	return fs
}

// name is a member's name in an error message.
func (fs *fields) name(key string) string {
	if fs.path == "" {
		return key
	}
	return fs.path + "." + key
}

// captures are what the walk of one event found, for the API's
// interpretation. A slot's value is valid only while its bit is set, so a
// new event costs clearing three words, not the slots.
type captures struct {
	strs, raws        [nSlots][]byte
	seen, flags, rawn uint16
	elems             int // elements of the kArray field read last (choices)
}

// has reports whether slot i holds a string (not null), a boolean, or an
// object that was there.
func (c *captures) has(i int) bool { return c.seen&(1<<i) != 0 }

// str is slot i's string, nil if none.
func (c *captures) str(i int) []byte {
	if !c.has(i) {
		return nil
	}
	return c.strs[i]
}

// flag is slot i's boolean, false if none.
func (c *captures) flag(i int) bool { return c.flags&(1<<i) != 0 }

// raw is raw slot i's value as sent, nil if none.
func (c *captures) raw(i int) []byte {
	if c.rawn&(1<<i) == 0 {
		return nil
	}
	return c.raws[i]
}

func (c *captures) mark(i uint8) { c.seen |= 1 << i }

// members walks the members of the object just entered, by fs. It is the
// hot path of every adapter: one loop that finds each key's field and reads
// the value in place, calling out only for nested objects and rare kinds
// (a function call per key or per value costs more than the lookup).
func (st *state) members(data []byte, fs *fields) *trace.Error {
	s, e, c := &st.js, &st.ev, &st.cap
	for n := 0; ; n++ {
		k, ok := s.key(n)
		if !ok {
			break
		}
		if len(k) == 0 || fs.index[fs.h.of(k)] == 0 {
			s.skip()
			continue
		}
		f := &fs.list[fs.index[fs.h.of(k)]-1]
		// pack(k), by hand: the compiler does not inline it.
		var p packed
		switch m := len(k); {
		case m >= 8:
			p = packed{binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[m-8:]), m}
		case cap(k) >= 8:
			p = packed{binary.LittleEndian.Uint64(k[:8]) & (1<<(8*m) - 1), 0, m}
		default:
			p = packShort(k)
		}
		if !f.is(p, k) {
			s.skip()
			continue
		}
		switch f.kind {
		case kText, kReasoning:
			dst, buf := &e.text, &st.tbuf
			if f.kind == kReasoning {
				if len(e.reasoning) > 0 {
					s.skip()
					continue
				}
				dst, buf = &e.reasoning, &st.rbuf
			}
			v, _, ok := s.str(buf)
			if !ok {
				if err := st.wrongType(data, fs, f, "a string"); err != nil {
					return err
				}
				continue
			}
			if len(v) > 0 {
				*dst = v
			}
			c.mark(f.slot)
		case kStr:
			v, null, ok := s.str(&st.sbuf[f.slot])
			if !ok {
				if err := st.wrongType(data, fs, f, "a string"); err != nil {
					return err
				}
				continue
			}
			if !null {
				c.strs[f.slot] = v
				c.mark(f.slot)
			}
		case kRaw:
			c.raws[f.slot] = s.raw()
			c.rawn |= 1 << f.slot
		case kObject, kArray:
			if s.null() {
				continue
			}
			open, want := byte('{'), "an object"
			if f.kind == kArray {
				open, want = '[', "an array"
			}
			if !s.enter(open) {
				if err := st.wrongType(data, fs, f, want); err != nil {
					return err
				}
				continue
			}
			var err *trace.Error
			if f.kind == kArray {
				err = st.elements(data, f)
			} else {
				c.mark(f.slot)
				err = st.members(data, f.sub)
			}
			if err != nil {
				return err
			}
		case kUsage:
			if s.null() {
				continue
			}
			s.ws()
			start := s.i
			if f.sub != nil {
				if !s.enter('{') {
					if err := st.wrongType(data, fs, f, "an object"); err != nil {
						return err
					}
					continue
				}
				if err := st.members(data, f.sub); err != nil {
					return err
				}
			} else if s.skip(); s.err != "" {
				return st.syntaxError(data)
			}
			st.usage, st.hasUsage = append(st.usage[:0], data[start:s.i]...), true
			c.mark(f.slot)
		default:
			if err := st.value(data, fs, f); err != nil {
				return err
			}
		}
	}
	if s.err != "" {
		return st.syntaxError(data)
	}
	return nil
}

// elements walks the elements of the array just entered as objects by f's
// table.
func (st *state) elements(data []byte, f *field) *trace.Error {
	s := &st.js
	n := 0
	for ; s.elem(n); n++ {
		if n > 0 && f.first {
			s.skip() // only the first element counts
			continue
		}
		if s.null() {
			continue
		}
		if !s.enter('{') {
			if s.err != "" {
				return st.syntaxError(data)
			}
			return st.shapeError(data, f.sub.path+" is not an object")
		}
		if !f.items {
			if err := st.members(data, f.sub); err != nil {
				return err
			}
			continue
		}
		st.cap.seen &^= 1 << itemType
		before := st.ev.text
		if err := st.members(data, f.sub); err != nil {
			return err
		}
		if e := &st.ev; bytes.HasPrefix(st.cap.str(itemType), []byte("reasoning")) && !sameBytes(e.text, before) {
			// The item's text was reasoning: it goes there (copied, since
			// the text's buffer serves the next item) and the answer is
			// what it was before the item.
			if len(e.reasoning) == 0 {
				st.rbuf = append(st.rbuf[:0], e.text...)
				e.reasoning = st.rbuf
			}
			e.text = before
		}
	}
	if s.err != "" {
		return st.syntaxError(data)
	}
	st.cap.elems = n
	return nil
}

// sameBytes reports whether a and b are the same slice (not merely equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// value reads the value of f, a member of fs, for the kinds members does
// not read in place.
func (st *state) value(data []byte, fs *fields, f *field) *trace.Error {
	s, e, c := &st.js, &st.ev, &st.cap
	switch f.kind {
	case kBool:
		v, ok := s.boolean()
		if !ok {
			return st.wrongType(data, fs, f, "a boolean")
		}
		c.mark(f.slot)
		if v {
			c.flags |= 1 << f.slot
		}
	case kTimings:
		if s.null() {
			return nil
		}
		if v := s.raw(); s.err == "" {
			st.timings, st.hasTimings = append(st.timings[:0], v...), true
		}
	case kCount:
		if !s.enter('[') {
			s.skip()
			return nil
		}
		m := 0
		for ; s.elem(m); m++ {
			s.skip()
		}
		e.tokens = m
	case kError:
		if !s.null() {
			e.isErr = true
			e.errMsg = st.errorMessage()
		}
	case kErrorText:
		if !s.null() {
			e.errMsg = st.errorMessage()
		}
	case kServerT:
		e.serverT = st.serverTime()
	}
	return nil
}

// wrongType handles a value that is not what f reads: skipped for a lax
// field, else a shape error (or the syntax error that stopped the scan).
func (st *state) wrongType(data []byte, fs *fields, f *field, want string) *trace.Error {
	if st.js.err != "" {
		return st.syntaxError(data)
	}
	if f.lax {
		st.js.skip()
		return nil
	}
	return st.shapeError(data, fs.name(f.key)+" is not "+want)
}

// need refuses an event that has none of the captures whose bits are in
// mask (another API's stream), unless it is an error.
func (st *state) need(data []byte, what string, mask uint16) *trace.Error {
	if st.ev.isErr || st.cap.seen&mask != 0 {
		return nil
	}
	return st.shapeError(data, what)
}

// word returns the word pairs give for v (pairs alternate: a server's
// word, the trace's), or v itself: finish reasons mapped to OpenAI's.
func (st *state) word(v []byte, pairs ...string) []byte {
	for i := 0; i+1 < len(pairs); i += 2 {
		if string(v) == pairs[i] {
			st.wbuf = append(st.wbuf[:0], pairs[i+1]...)
			return st.wbuf
		}
	}
	return v
}

// Finish words an API sends as a constant.
var (
	wordStop   = []byte("stop")
	wordLength = []byte("length")
	wordDone   = []byte("done")
)

// counts writes the raw captures in slots 1…len(keys) to *dst as one JSON
// object of the keys that were sent, each value as sent, and reports
// whether there was one: the counts an API spreads over an event's
// members (llama.cpp's tokens_predicted, Ollama's durations) gathered as
// the record's usage or timings.
func (st *state) counts(dst *[]byte, keys ...string) bool {
	c := &st.cap
	if c.rawn&(1<<(1+len(keys))-2) == 0 {
		return false
	}
	*dst = append((*dst)[:0], '{')
	first := true
	for i, k := range keys {
		v := c.raw(1 + i)
		if v == nil {
			continue
		}
		if !first {
			*dst = append(*dst, ',')
		}
		first = false
		*dst = append(*dst, '"')
		*dst = append(*dst, k...)
		*dst = append(*dst, '"', ':')
		*dst = append(*dst, v...)
	}
	*dst = append(*dst, '}')
	return true
}
