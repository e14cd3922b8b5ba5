package replay

import (
	"sync/atomic"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Kernel receive timestamps. A chunk's arrival time taken in user space
// (now() right after the read returned) includes the client's own delay:
// the goroutine's wait to be scheduled, and the time spent draining every
// other stream that became readable at once. On Linux the kernel stamps
// each TCP segment when it receives it (SO_TIMESTAMPING,
// SOF_TIMESTAMPING_RX_SOFTWARE) and recvmsg hands the stamp of the last
// segment it copied from back as a control message. Every connection the
// client dials reads through recvmsg when the run's source is kernel
// (kts_linux.go) and keeps the stamp of its latest read; a request's clock
// (reqClock) pairs it with the user-space time of the same read.
//
// Which stamp an event gets: the stream parser times an event by the read
// that delivered its last byte (replay/stream). net/http's buffered reader
// reads the connection only when its buffer is empty, so the bytes the
// parser receives were delivered by the connection's latest read; that
// read's stamp is the arrival of the last segment it copied, the latest of
// the segments it returned (TCP delivers in sequence order). The event's
// last byte arrived in that segment or before it, so the stamp is an upper
// bound on the arrival, never earlier than the truth, and never later than
// the user-space time (it was taken before the read returned). When one
// read returns several events they share the stamp, as they share the
// user-space time today. Under TLS the stamp is that of the read that
// completed the TLS record holding the event's last byte: the same bound.
//
// Mapping onto the run clock: kernel stamps are CLOCK_REALTIME. Each read's
// user-space time is taken with time.Now, which reads the wall and the
// monotonic clocks together, so delay = wall(now) − stamp is a difference
// of two readings of one clock, and the chunk's time is run(now) − delay.
// The error of the mapping is the wall clock's drift over the delay (NTP
// slews at most 500 ppm: 0.5 µs per ms of delay) plus the tens of
// nanoseconds between the two clock reads; a step of the wall clock
// between a segment's arrival and its read shows as a delay below 0 or
// beyond an hour and makes the request fall back to user-space times.

// The timestamp sources of Config.Timestamps.
const (
	TimestampsAuto   = "auto"
	TimestampsKernel = "kernel"
	TimestampsUser   = "user"
)

// maxKernelDelay bounds a believable delay between a segment's arrival and
// its read: beyond it the wall clock stepped (or the stamp is garbage).
// The trace's reader takes none past it either.
const maxKernelDelay = trace.MaxUserDelay

// kstamp is a connection's kernel-stamp state.
type kstamp struct {
	// last is the wall-clock stamp (ns since the epoch) of the latest read
	// that returned bytes; 0 before the first.
	last atomic.Int64
	// fails counts reads that returned bytes without a usable stamp; why
	// says why the first did.
	fails atomic.Int64
	why   atomic.Pointer[string]
	// io is the OS-specific reader (kts_linux.go).
	io kread
}

func (k *kstamp) fail(why string) {
	k.fails.Add(1)
	k.why.CompareAndSwap(nil, &why)
}

// reqClock is one request's clock. now() returns the user-space run time
// (strictly increasing, so each value names one read) and keeps it: the
// latest is the time of the request's latest read, where its response
// ended (engine.do). When the run's source is kernel (k set) it also logs
// the kernel time of the same read beside it. After the response, apply
// turns the headers', chunks' and end's times into kernel times, keeping
// the user-space ones in UserT (Config.ChunkUserTimes) or their delays'
// mean and largest in the record, marks the chunks read late, or leaves
// every time in user space when any read of the request lacked a stamp:
// never a mix within a request.
type reqClock struct {
	e      *engine
	k      *kstamp // nil: user-space times
	fails0 int64
	prev   int64
	bad    string
	log    []kpair
	// stamp and kernel are the latest read's stamp and its run-clock
	// time: a stamp is mapped once, so events of one read share one time
	// (the mapping moves by nanoseconds from one clock reading to the next).
	stamp, kernel int64
}

type kpair struct{ user, kernel int64 }

func (c *reqClock) now() int64 {
	t := time.Now()
	user := int64(t.Sub(c.e.start))
	if user <= c.prev {
		user = c.prev + 1
	}
	c.prev = user
	if c.k == nil || c.bad != "" {
		return user
	}
	stamp := c.k.last.Load()
	switch delay := t.UnixNano() - stamp; {
	case c.k.fails.Load() != c.fails0:
		why := "a read returned no kernel timestamp"
		if p := c.k.why.Load(); p != nil {
			why = *p
		}
		c.bad = why
	case stamp == 0:
		c.bad = "a read returned no kernel timestamp"
	case delay < 0 || delay > maxKernelDelay:
		c.bad = "the wall clock stepped between a packet's arrival and its read (kernel delay " + time.Duration(delay).String() + ")"
	default:
		if stamp != c.stamp {
			c.stamp, c.kernel = stamp, user-delay
		}
		c.log = append(c.log, kpair{user, c.kernel})
	}
	return user
}

// apply gives the record's headers, chunks and end their kernel times and
// marks its chunks read late, or notes why the request kept user-space
// times. The end moves only when it is the time of a read (the response
// ended with [DONE], the body's end or an event that failed it); a request
// the client's timer or the connection cut ends when the client saw that.
func (c *reqClock) apply(rec *trace.Record) string {
	if c.bad != "" {
		rec.UserTimes = true
		return "user-space timestamps for this request: " + c.bad
	}
	headers, ok := c.kernelOf(rec.Headers, 0)
	if !ok {
		rec.UserTimes = true
		return "user-space timestamps for this request: the headers' time came from no read"
	}
	j := 0
	for i := range rec.Chunks {
		for j < len(c.log) && c.log[j].user < rec.Chunks[i].T {
			j++
		}
		if j == len(c.log) || c.log[j].user != rec.Chunks[i].T {
			// A time not from this clock (an adapter's own): keep the
			// request in one source.
			rec.UserTimes = true
			return "user-space timestamps for this request: a chunk's time came from no read"
		}
	}
	rec.Headers = headers
	if done, ok := c.kernelOf(rec.Done, 0); ok {
		rec.Done = done
	}
	j = 0
	var sum, most int64
	for i := range rec.Chunks {
		for c.log[j].user < rec.Chunks[i].T {
			j++
		}
		user, kernel := rec.Chunks[i].T, c.log[j].kernel
		// UserT holds the user-space time until the marks below are set,
		// and keeps it only when the run asked for it.
		rec.Chunks[i].UserT = user
		rec.Chunks[i].T = kernel
		sum, most = sum+user-kernel, max(most, user-kernel)
	}
	if n := int64(len(rec.Chunks)); n > 0 {
		// As a reader computes them from a kept column: the same
		// numbers whether or not the chunks kept their times.
		rec.UserDelayMean, rec.UserDelayMax = sum/n, most
	}
	trace.MarkSharedReads(rec)
	markSlowReads(rec)
	if !c.e.cfg.ChunkUserTimes {
		for i := range rec.Chunks {
			rec.Chunks[i].UserT = 0
		}
	}
	return ""
}

// markSlowReads marks the content chunks whose read returned (UserT)
// after the stream's next content chunk, delivered by a later read, had
// arrived (its stamp): the client was a chunk or more behind its stream.
// Their delay is how long after its stamp the read returned.
func markSlowReads(rec *trace.Record) {
	const none = int64(1<<63 - 1)
	cur, next := none, none // the times of the latest two reads met, going back
	for i := len(rec.Chunks) - 1; i >= 0; i-- {
		ch := &rec.Chunks[i]
		if !ch.Content() {
			continue
		}
		if ch.T < cur {
			cur, next = ch.T, cur
		}
		if next == none || ch.UserT <= next {
			continue
		}
		if d := ch.UserT - ch.T; d > rec.ReadLateMax {
			rec.ReadLateMax = d
		}
		if !ch.ReadLate {
			ch.ReadLate = true
			rec.ReadLate++
		}
	}
}

// kernelOf finds the kernel time logged with the user time u, searching
// from log index j on (times only grow).
func (c *reqClock) kernelOf(u int64, j int) (int64, bool) {
	for j < len(c.log) && c.log[j].user < u {
		j++
	}
	if j == len(c.log) || c.log[j].user != u {
		return 0, false
	}
	return c.log[j].kernel, true
}

// clockScrape reads how far the wall clock has moved against the run
// clock since the start (trace.SourceClock): written at the start and the
// end of the run, so analyze can tell a step of the wall clock, which
// kernel stamps are taken on, from the slew NTP may apply.
func (e *engine) clockScrape() *trace.Scrape {
	t := time.Now() // wall and monotonic read together
	run := int64(t.Sub(e.start))
	return &trace.Scrape{T: run, Source: trace.SourceClock, Target: "wall clock - run clock",
		Samples: []trace.Sample{{Name: trace.ClockOffsetSample, Value: float64(t.UnixNano() - run - e.startUnix)}}}
}

// addNote appends a note to the record's notes.
func addNote(rec *trace.Record, note string) {
	if rec.Notes != "" {
		rec.Notes += "; "
	}
	rec.Notes += note
}
