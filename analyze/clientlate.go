package analyze

import (
	"fmt"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Chunks read late, and a response's end on another clock than its
// chunks. A chunk's time is the kernel's stamp of the read that delivered
// it, which is the arrival of the last segment that read copied: a chunk
// the client read only together with a later chunk of its stream carries
// that later chunk's arrival. The trace marks such chunks (trace 1.6, or
// the reader from shared stamps in a 1.4/1.5 trace: trace.Chunk.ReadLate);
// docs/METRICS.md, "client_fell_behind", has the rule and what the
// metrics do with them.

// Warning codes of this file.
const (
	// WarnClientFellBehind: the client read chunks of a stream only with a
	// later chunk, or after the stream's next chunk had arrived.
	WarnClientFellBehind = "client_fell_behind"
	// WarnDoneUserTime: a trace of format 1.5 or older recorded each
	// response's end in user space while its chunk times are kernel
	// stamps.
	WarnDoneUserTime = "done_user_time"
)

// clientLate tallies a trace's chunks read late and its responses' ends.
type clientLate struct {
	content, late int   // measured content chunks, and those read late
	requests      int   // requests with a chunk read late
	worst         int64 // the largest delay (Record.ReadLateMax), ns
	worstID       string
	// ttftBound counts the successful requests whose first content chunk
	// was read late (their TTFT is an upper bound), and ttftWorst the
	// most it may be above the arrival.
	ttftBound int
	ttftWorst int64
	// itlLeft counts the inter-chunk gaps left out of ITL (leftOut).
	itlLeft int
	// endGap sums, over successful responses, their end minus their last
	// chunk, and endMax is the largest, for a trace whose ends were user
	// time; ends counts them.
	ends           int
	endSum, endMax int64
}

// observe counts one measured record.
func (c *clientLate) observe(rec *trace.Record) {
	first := -1
	var prev *trace.Chunk
	for i := range rec.Chunks {
		ch := &rec.Chunks[i]
		if !ch.Content() {
			continue
		}
		c.content++
		if first < 0 {
			first = i
		} else if leftOut(prev, ch) {
			c.itlLeft++
		}
		prev = ch
		if ch.ReadLate {
			c.late++
		}
	}
	if rec.ReadLate > 0 {
		c.requests++
		if rec.ReadLateMax > c.worst || c.worstID == "" {
			c.worst, c.worstID = max(rec.ReadLateMax, c.worst), rec.ID
		}
	}
	if !rec.OK() || first < 0 {
		return
	}
	if fc := &rec.Chunks[first]; fc.ReadLate {
		c.ttftBound++
		c.ttftWorst = max(c.ttftWorst, fc.T-readBefore(rec, fc.T))
	}
	if n := len(rec.Chunks); n > 0 && rec.Done >= rec.Chunks[n-1].T {
		d := rec.Done - rec.Chunks[n-1].T
		c.ends++
		c.endSum += min(d, trace.MaxUserDelay)
		c.endMax = max(c.endMax, d)
	}
}

// leftOut says whether ITL leaves out the gap into content chunk ch from
// the content chunk before it, prev: the gap into a chunk read late (its
// time is an upper bound), and the gap of 0 after one that shared its read
// with ch (it carries ch's arrival). A trace without marks (user-space
// times) leaves out nothing.
func leftOut(prev, ch *trace.Chunk) bool {
	return ch.ReadLate || (prev.ReadLate && prev.T == ch.T)
}

// readBefore is the time of the request's latest read before t: the
// latest earlier chunk time below t, else the headers' time when below
// t, else the send. A chunk stamped t arrived after it.
func readBefore(rec *trace.Record, t int64) int64 {
	lo := rec.Sent
	if rec.Headers > lo && rec.Headers < t {
		lo = rec.Headers
	}
	for i := range rec.Chunks {
		if ct := rec.Chunks[i].T; ct < t && ct > lo {
			lo = ct
		}
	}
	return lo
}

// clientLateWarnings are a trace's client_fell_behind and done_user_time
// warnings.
func clientLateWarnings(t *TraceAcc, lk map[string]any) []Warning {
	c := &t.late
	var out []Warning
	if c.late > 0 {
		share := float64(c.late) / float64(c.content)
		msg := fmt.Sprintf("the client read %d of %d chunks (%.2f%%, in %d %s) late: together with a later chunk of their stream, or after its next chunk had arrived; the worst by up to %v (%s). ITL leaves out the %d gaps into those chunks and between chunks of one read",
			c.late, c.content, 100*share, c.requests, plural(c.requests, "request", "requests"),
			roundDur(c.worst), c.worstID, c.itlLeft)
		if c.ttftBound > 0 {
			msg += fmt.Sprintf("; the TTFT of %d %s whose first chunk was read late is an upper bound, at most %v above the arrival (and the time after it short by as much)",
				c.ttftBound, plural(c.ttftBound, "request", "requests"), roundDur(c.ttftWorst))
		}
		msg += ": the client did not read these streams as fast as their chunks came (more streams than its cores keep up with, or a server that sends several chunks at once)"
		out = append(out, Warning{Code: WarnClientFellBehind, Keys: lk, Message: msg,
			Evidence: map[string]any{"chunks_read_late": c.late, "of_chunks": c.content, "share": round3(share),
				"requests": c.requests, "worst_delay_ns": c.worst, "worst_request": c.worstID,
				"itl_gaps_left_out": c.itlLeft, "ttft_upper_bounds": c.ttftBound, "ttft_bound_ns": c.ttftWorst}})
	}
	h := &t.header
	if h.TimeSource(trace.FieldChunk) == trace.TimestampsKernel && h.TimeSource(trace.FieldDone) == trace.TimestampsUser && c.ends > 0 {
		mean := c.endSum / int64(c.ends)
		out = append(out, Warning{Code: WarnDoneUserTime, Keys: lk,
			Message: fmt.Sprintf("this trace (format %d.%d) took each response's end when the client saw it, while its chunk times are kernel receive stamps: E2E, TPOT and the speeds over E2E include the client's delay after the last event (end − last chunk: %v on average, %v at most, over %d responses); traces from this version take both from the kernel",
				h.Major, h.Minor, roundDur(mean), roundDur(c.endMax), c.ends),
			Evidence: map[string]any{"responses": c.ends, "end_after_last_chunk_mean_ns": mean, "end_after_last_chunk_max_ns": c.endMax}})
	}
	return out
}

// roundDur shows a duration to a sensible precision.
func roundDur(ns int64) time.Duration {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}
