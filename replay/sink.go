package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Sink takes the finished records of a run (vegeta's attack → results →
// reporter): the trace file is one sink; a progress display, bench's live
// table or a capacity search are others, added without touching the engine.
//
// All methods are called from one goroutine, off the timing path, in this
// order: Start once (with the trace header, once the model is known and the
// run clock started), Record for every finished request in finishing order,
// Close once. An error from Start stops the run before it sends anything;
// an error from Record stops the run (a trace that cannot be written must
// not let requests go on loading the server); Close's error is reported.
type Sink interface {
	Start(h trace.Header) error
	Record(r *trace.Record) error
	Close() error
}

// TraceFile is the sink that writes the trace file at Path, flushed every
// FlushInterval (0: the trace writer's default, DefaultFlushInterval) so a
// crash loses at most that.
type TraceFile struct {
	Path          string
	FlushInterval time.Duration
	w             *trace.Writer
	// progress is the run's clock and sends, for the trace's progress
	// entries; the engine sets it before Start.
	progress func() (t, sent int64)
}

// Start creates the file and writes the header.
func (t *TraceFile) Start(h trace.Header) error {
	var opts []trace.Option
	if t.FlushInterval > 0 { // else the writer applies its own default, the one owner
		opts = append(opts, trace.WithFlushInterval(t.FlushInterval))
	}
	if t.progress != nil {
		opts = append(opts, trace.WithProgress(t.progress))
	}
	w, err := trace.Create(t.Path, h, opts...)
	if err != nil {
		return err
	}
	t.w = w
	return nil
}

// Record writes one record.
func (t *TraceFile) Record(r *trace.Record) error {
	if err := t.w.Write(r); err != nil {
		// The trace package's error names the file and what stays readable.
		return fmt.Errorf("run stopped: %w", err)
	}
	return nil
}

// Close flushes and closes the file.
func (t *TraceFile) Close() error {
	if t.w == nil {
		return nil
	}
	if err := t.w.Close(); err != nil {
		return fmt.Errorf("closing the trace: %w", err)
	}
	return nil
}

// SinkFunc is a sink that only looks at records (progress, live tables).
type SinkFunc func(*trace.Record)

func (f SinkFunc) Start(trace.Header) error     { return nil }
func (f SinkFunc) Record(r *trace.Record) error { f(r); return nil }
func (f SinkFunc) Close() error                 { return nil }

var (
	_ Sink = (*TraceFile)(nil)
	_ Sink = SinkFunc(nil)
)

// sinks runs a list of sinks as one.
type sinks []Sink

func (s sinks) Start(h trace.Header) error {
	for i, k := range s {
		if err := k.Start(h); err != nil {
			// Close the ones already started: their files stay valid.
			for _, started := range s[:i] {
				started.Close()
			}
			return err
		}
	}
	return nil
}

// Record hands r to every sink and returns the first error. A sink that
// failed keeps getting records: the others (progress) still want them.
func (s sinks) Record(r *trace.Record) error {
	var first error
	for _, k := range s {
		if err := k.Record(r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s sinks) Close() error {
	var errs []error
	for _, k := range s {
		errs = append(errs, k.Close())
	}
	return errors.Join(errs...)
}
