package inspect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// Open opens the trace at path, or reads it from in for "-".
func Open(path string, in io.Reader) (*trace.Reader, error) {
	if path == "-" {
		return trace.NewReader(in)
	}
	return trace.Open(path)
}

// WriteInfo writes each trace's header and counts (Read) to w, a blank line
// between two. Every error is about an input.
func WriteInfo(w io.Writer, in io.Reader, paths []string) error {
	for i, path := range paths {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r, err := Open(path, in)
		if err != nil {
			return err
		}
		Read(r, path).WriteText(w)
		r.Close()
		if err := r.Err(); err != nil {
			return err
		}
	}
	return nil
}

// CatOptions say what Cat prints of each trace: its records (without
// their chunks with NoChunks), its scrapes (Scrapes), or with Requests a
// row per record that Rows makes (each request's metrics, computed by
// Definitions: analyze's, which this package does not import).
type CatOptions struct {
	NoChunks, Scrapes, Requests bool
	Definitions                 string
	Rows                        func(path string, h trace.Header, notes io.Writer) (func(*trace.Record) any, error)
}

// Check refuses options that print different things at once; given says
// which were stated, since Definitions has a default.
func (o CatOptions) Check(given fielderr.Given) error {
	err := func(field, format string) error { return fielderr.Newf("inspect: CatOptions", field, format) }
	switch {
	case o.Requests && o.NoChunks:
		return err("Requests", "{Requests} and {NoChunks} print different things: give one")
	case o.Scrapes && (o.Requests || o.NoChunks):
		return err("Scrapes", "{Scrapes} prints the scrapes, not the records: give it without {Requests} and {NoChunks}")
	case given.Has("Definitions") && !o.Requests:
		return err("Definitions", "{Definitions} applies to {Requests} only")
	}
	return nil
}

// WriteError is a failure to write Cat's output (a closed pipe, a full
// disk), not a fault of the input.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return "writing the output: " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Cat writes each trace of paths ("-": read from in) to w as JSON lines,
// as o says, and to notes what a person should hear of how each scan
// ended (Notes). Records hold the server's own strings, exact for jq; the
// bidirectional and C1 controls among them are written as \u escapes
// (the same value decoded), so the lines cannot be reordered on a
// terminal. A failure to write w is a *WriteError; any other error is
// about an input.
func Cat(w, notes io.Writer, in io.Reader, paths []string, o CatOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(safetext.JSONWriter(bw))
	enc.SetEscapeHTML(false)
	for _, path := range paths {
		if err := catOne(enc, notes, in, path, o); err != nil {
			bw.Flush()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return &WriteError{err}
	}
	return nil
}

func catOne(enc *json.Encoder, notes io.Writer, in io.Reader, path string, o CatOptions) error {
	r, err := Open(path, in)
	if err != nil {
		return err
	}
	defer r.Close()
	switch {
	case o.Requests:
		row, err := o.Rows(path, r.Header(), notes)
		if err != nil {
			return err
		}
		for r.Scan() && err == nil {
			err = enc.Encode(row(r.Record()))
		}
	case o.Scrapes:
		err = Scrapes(enc, r)
	default:
		err = Records(enc, r, o.NoChunks)
	}
	if err != nil {
		return &WriteError{err}
	}
	for _, n := range Notes(path, r) {
		fmt.Fprintln(notes, n)
	}
	return r.Err()
}
