// Package tracetest reads a whole trace for tests: its header and every
// record, copied out of the buffers the reader reuses; and it builds the
// pieces of hand-made traces (handmade.go). It is a client of
// trace and imports nothing else of the product, so the tests of any
// package above trace may use it.
package tracetest

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// File is a trace as read to its end.
type File struct {
	Header  trace.Header
	Records []trace.Record
	// Truncated: the file ended without the writer's end marker (a run
	// killed, or a copy cut short).
	Truncated bool
}

// Read reads the trace at path, failing the test if it cannot be opened
// or read; a truncated trace is not an error here (File.Truncated says so).
func Read(t testing.TB, path string) File {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f File
	for r.Scan() {
		rec := *r.Record()
		rec.Chunks = append([]trace.Chunk(nil), rec.Chunks...)
		if rec.Error != nil {
			e := *rec.Error
			rec.Error = &e
		}
		f.Records = append(f.Records, rec)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	f.Header, f.Truncated = r.Header(), r.Truncated()
	return f
}
