package stream

import (
	"bytes"
	"errors"
	"io"
)

// The reference parsers below read the whole stream at once and follow the
// specification line by line, with none of the buffering, chunk boundaries
// or reuse of the real parser; the fuzz targets check the two agree.

type refEvent struct {
	Data    string
	Name    string
	ID      string
	Partial bool
	// Term is the offset of the first byte of the line ending that
	// dispatched the event (len(input) for a partial one).
	Term int
}

func refSSE(in []byte, max int) ([]refEvent, error) {
	var out []refEvent
	i := 0
	if bytes.HasPrefix(in, bom) {
		i = len(bom)
	}
	var data, name, id []byte
	hasData := false
	tooLarge := errors.New("too large")
	handle := func(line []byte, term int, partial bool) error {
		if len(line) > max {
			return tooLarge
		}
		if len(line) == 0 {
			if hasData {
				out = append(out, refEvent{Data: string(data), Name: string(name), ID: string(id), Term: term, Partial: partial})
			}
			data, name, hasData = nil, nil, false
			return nil
		}
		if line[0] == ':' {
			return nil
		}
		field, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			field, value = line[:c], line[c+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
			if len(data) > max {
				return tooLarge
			}
		case "event":
			name = append([]byte(nil), value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				id = append([]byte(nil), value...)
			}
		}
		return nil
	}
	for i < len(in) {
		j := i
		for j < len(in) && in[j] != '\r' && in[j] != '\n' {
			j++
		}
		if j == len(in) {
			if err := handle(in[i:], len(in), true); err != nil {
				return out, err
			}
			break
		}
		if err := handle(in[i:j], j, false); err != nil {
			return out, err
		}
		if in[j] == '\r' && j+1 < len(in) && in[j+1] == '\n' {
			j++
		}
		i = j + 1
	}
	if hasData {
		out = append(out, refEvent{Data: string(data), Name: string(name), ID: string(id), Term: len(in), Partial: true})
	}
	return out, nil
}

func refNDJSON(in []byte, max int) ([]refEvent, error) {
	var out []refEvent
	i := 0
	if bytes.HasPrefix(in, bom) {
		i = len(bom)
	}
	for i < len(in) {
		j := bytes.IndexByte(in[i:], '\n')
		partial := j < 0
		if partial {
			j = len(in)
		} else {
			j += i
		}
		line := in[i:j]
		if len(line) > max {
			return out, errors.New("too large")
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !blank(line) {
			out = append(out, refEvent{Data: string(line), Term: j, Partial: partial})
		}
		i = j + 1
	}
	return out, nil
}

// chunkReader returns the stream in reads of the given sizes (cycled), and
// counts reads so a test clock can say which read delivered a byte.
type chunkReader struct {
	b     []byte
	sizes []int
	k     int
	reads int64
	// ends[r] is the offset just past the bytes returned by read r.
	ends []int
	off  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = c.sizes[c.k%len(c.sizes)]
		c.k++
	}
	n = min(n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	c.off += n
	c.ends = append(c.ends, c.off)
	c.reads++
	return n, nil
}

// now returns the number of the latest read (1-based), so an event's T names
// the read that delivered its last byte.
func (c *chunkReader) now() int64 { return c.reads }

// readOf returns the 1-based number of the read that delivered byte off.
func (c *chunkReader) readOf(off int) int64 {
	for r, end := range c.ends {
		if off < end {
			return int64(r + 1)
		}
	}
	return int64(len(c.ends))
}
