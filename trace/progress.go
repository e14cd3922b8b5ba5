package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Progress is a progress entry (1.6): written at every flush, and once
// more by Close. A record is written when its request ends, so a trace
// cut by a kill holds no trace of the requests then in flight; the entry
// says how many had been sent by each flush, so a reader tells them from
// requests never sent. The one Close writes (Closed) says the trace is
// complete: a 1.6 trace whose stream ends without it was cut short, even
// where the cut fell between two flushes.
type Progress struct {
	// Seq numbers the entries 1, 2, … in the order written: a reader that
	// meets one out of turn met a repeated or missing stretch of the file.
	Seq int64 `json:"seq"`
	// T is the run clock (ns since the start) when it was written; 0 when
	// the writer was not told (WithProgress).
	T int64 `json:"t_ns"`
	// Sent counts the measured requests whose send had begun (warm-ups not
	// counted); −1 when the writer was not told (a merge, a rewrite).
	Sent int64 `json:"sent"`
	// Records counts the records written before it.
	Records int64 `json:"records"`
	// Closed is set on the entry Close writes, the trace's last.
	Closed bool `json:"closed,omitempty"`
}

// progressClosed is the flags bit of Progress.Closed.
const progressClosed = 1

// maxProgressBytes bounds a progress entry's body: five varints.
const maxProgressBytes = 5 * binary.MaxVarintLen64

// WithProgress gives the writer the run's clock and count of requests
// sent, read at every flush for the progress entry (1.6). Without it the
// entries hold T 0 and Sent −1.
func WithProgress(f func() (t, sent int64)) Option {
	return func(c *writerConfig) error {
		c.progress = f
		return nil
	}
}

func appendProgressV1(b []byte, p *Progress) []byte {
	b = binary.AppendUvarint(b, uint64(p.Seq))
	b = binary.AppendVarint(b, p.T)
	b = binary.AppendVarint(b, p.Sent)
	b = binary.AppendUvarint(b, uint64(p.Records))
	var flags uint64
	if p.Closed {
		flags |= progressClosed
	}
	return binary.AppendUvarint(b, flags)
}

// decodeProgressV1 reads a progress entry's body. Bytes after the fields
// it knows are a later minor version's, and ignored.
func decodeProgressV1(body string, p *Progress) error {
	c := cursor{s: body}
	seq := c.uvarint()
	t := c.varint()
	sent := c.varint()
	records := c.uvarint()
	flags := c.uvarint()
	if c.err != nil {
		return c.err
	}
	if seq == 0 || seq > 1<<62 || records > 1<<62 || sent < -1 {
		return errors.New("a progress entry with impossible counts")
	}
	*p = Progress{Seq: int64(seq), T: t, Sent: sent, Records: int64(records), Closed: flags&progressClosed != 0}
	return nil
}

// CutSummary says in plain words what a trace cut short holds: measured
// of planned requests, and from its last progress entry (sent by then,
// at t on the run clock) how many requests were in flight and lost
// (sent, with no record among the records measured ones) and how many at
// most were never sent (those sent after the last flush are among them).
// trace info and analyze say it alike.
func CutSummary(measured, records, planned, sent, t int64) string {
	inFlight := max(sent-records, 0)
	were := "were"
	if inFlight == 1 {
		were = "was"
	}
	return fmt.Sprintf("cut off after %d of %d requests (the run was killed or crashed, or is still running): at least %d %s in flight and lost (sent by the last flush, %v into the run, with no record), at most %d never sent",
		measured, planned, inFlight, were, time.Duration(t).Round(time.Millisecond), max(planned-sent, 0))
}
