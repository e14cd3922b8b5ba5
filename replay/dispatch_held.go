package replay

import (
	"bytes"
	"net"
	"net/http"
	"sync"
)

// A release's sends from one goroutine: a burst's, and each open-loop
// request's at its due time (phase_open.go). Requests released together
// (a burst phase, a log's requests at one instant) used to wait at their gate each
// in a goroutine of its own, and each one woken went through net/http's
// round trip, which hands the bytes to its connection's write goroutine:
// two goroutine wake-ups a request, 64 for a burst of 32, queued behind
// one another on two cores (a spread of 0.7–3.6 ms at 32 on a loaded
// machine). Now each request goes through its round trip before the gate
// opens, as far as its connection's write: the connection (a watchedConn)
// keeps the bytes instead of sending them, and the release writes each
// request's bytes itself, one after another from one goroutine, stamping
// each send right before its write. A small request's write is one
// non-blocking system call on a warmed connection. The request's own
// goroutine is left only the reading.
//
// Plain HTTP on connections opened beforehand (--prewarm) only: a TLS
// connection writes records the client cannot tell the request's end in,
// and without --prewarm a connection's set-up belongs in the request's
// time, which a round trip taken before the gate would leave out; such a
// request waits at the gate and sends itself, as before. A request whose
// bytes were not all kept when the gate opens (its connection still being
// set up, its goroutine not yet run, a round trip that failed) goes out
// from its own goroutine, as without the gate, and is stamped sent right
// before that goroutine writes it (restamp), not at the release.

// Held send states.
const (
	heldWaiting   = iota // round trip not yet at its connection
	heldKeeping          // the connection keeps what is written
	heldPassing          // its connection cannot keep: waits at the gate in GotConn
	heldWritten          // the release wrote the kept bytes (err: how that went)
	heldReleased         // the gate opened before all bytes were kept: they go out as written
	heldCancelled        // the run stopped before the gate opened
)

// heldSend is one request's send by its release.
type heldSend struct {
	mu    sync.Mutex
	state int
	conn  *watchedConn
	buf   []byte
	// body is the request's body length; end the offset of the headers'
	// end in buf once seen (0: not yet), scanned how far buf was searched.
	body         int64
	end, scanned int
	complete     bool
	err          error // the release's write
	ready        func()
	gate         <-chan struct{}
	// restamp stamps the send again, right before the round trip writes
	// bytes the release did not (heldReleased): the release's stamp
	// would hide how much later they went out.
	restamp func()
}

// holdable says whether p can be sent by its release: a plain HTTP request
// built without error whose body length is known (so the kept bytes tell
// the request's end) and can be read again (a retry).
func holdable(p *prepared) bool {
	if p.err != nil || p.req == nil || p.req.URL.Scheme != "http" || p.req.ContentLength < 0 {
		return false
	}
	return p.req.ContentLength == 0 && (p.req.Body == nil || p.req.Body == http.NoBody) ||
		p.req.ContentLength > 0 && p.req.GetBody != nil
}

func (e *engine) newHeld(p *prepared, gate <-chan struct{}, ready func()) *heldSend {
	return &heldSend{body: p.req.ContentLength, gate: gate, ready: sync.OnceFunc(ready),
		buf: make([]byte, 0, 1024+p.req.ContentLength), restamp: func() { p.rec.Sent = e.now() }}
}

// got is GotConn: the connection c keeps the request's bytes from now on,
// unless it cannot (not one the client dialed), when the round trip waits
// here for the gate.
func (h *heldSend) got(c net.Conn) {
	h.mu.Lock()
	wc, watched := c.(*watchedConn)
	if h.state == heldReleased && watched {
		// Released before the round trip had its connection: its first
		// write restamps the send (keep).
		wc.hold.Store(h)
	}
	if h.state != heldWaiting {
		// Released, or a second attempt: it goes out as ever.
		h.mu.Unlock()
		return
	}
	if watched {
		h.state, h.conn = heldKeeping, wc
		h.buf, h.end, h.scanned, h.complete = h.buf[:0], 0, 0, false
		wc.hold.Store(h)
		h.mu.Unlock()
		return
	}
	h.state = heldPassing
	h.mu.Unlock()
	h.ready()
	<-h.gate
}

// keep takes a write of the round trip. false: the write goes to the
// socket (the release wrote the request already, or the gate opened first;
// then what was kept goes first).
func (h *heldSend) keep(c *watchedConn, b []byte) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case heldKeeping:
		h.buf = append(h.buf, b...)
		if h.end == 0 {
			if i := bytes.Index(h.buf[max(0, h.scanned-3):], []byte("\r\n\r\n")); i >= 0 {
				h.end = max(0, h.scanned-3) + i + 4
			}
			h.scanned = len(h.buf)
		}
		if !h.complete && h.end > 0 && int64(len(h.buf)-h.end) >= h.body {
			h.complete = true
			h.ready()
		}
		return true, nil
	case heldReleased:
		// The gate opened before all bytes were kept: they go out now,
		// from the round trip, and so the send is stamped now. Once.
		c.hold.Store(nil)
		h.state = heldWritten
		h.restamp()
		if len(h.buf) > 0 {
			kept := h.buf
			h.buf = nil
			if _, err := c.Conn.Write(kept); err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// Write is the round trip's write: kept while a held send keeps it.
func (c *watchedConn) Write(b []byte) (int, error) {
	if h := c.hold.Load(); h != nil {
		if kept, err := h.keep(c, b); err != nil {
			return 0, err
		} else if kept {
			return len(b), nil
		}
	}
	return c.Conn.Write(b)
}

// writeHeld is the release's send of p: the kept bytes written now when
// all are there, stamped right before the write; else stamped now and
// left to the round trip. It reports whether it wrote.
func (e *engine) writeHeld(p *prepared, at int64) bool {
	h := p.held
	h.mu.Lock()
	defer h.mu.Unlock()
	p.rec.Scheduled = at
	if h.state != heldKeeping || !h.complete {
		p.rec.Sent = e.now()
		if h.state != heldPassing {
			h.state = heldReleased
		}
		return false
	}
	h.state = heldWritten
	h.conn.hold.Store(nil)
	p.rec.Sent = e.now()
	if _, err := h.conn.Conn.Write(h.buf); err != nil {
		// The round trip waits for an answer on this connection: close
		// it so that it ends, and its goroutine reports err.
		h.err = err
		h.conn.Close()
	}
	h.buf = nil
	return true
}

// cancelHeld stops p's held send: the run stopped before its gate opened.
func (p *prepared) cancelHeld() {
	h := p.held
	h.mu.Lock()
	h.state = heldCancelled
	if h.conn != nil {
		h.conn.hold.Store(nil)
	}
	h.mu.Unlock()
	p.cancel(errCancelled)
}

// doHeld is the goroutine of a request its release sends: its round trip
// up to the connection's write before the gate, the reading after. It
// always calls e.inflight.Done.
func (e *engine) doHeld(p *prepared, r *release) {
	defer e.inflight.Done()
	resp, err := e.client.Do(p.req)
	// Ready also when the round trip ended before its bytes were kept
	// (a refused dial): the release must not wait for it.
	p.held.ready()
	<-r.gate
	if r.cancelled {
		if resp != nil {
			resp.Body.Close()
		}
		return
	}
	<-r.sent // the release's stamps and timers come before the reading
	defer e.settle(p)
	defer p.stopTimers()
	if werr := p.held.err; werr != nil {
		if resp != nil {
			resp.Body.Close()
		}
		resp, err = e.retryOnNew(p, nil, werr)
	} else {
		resp, err = e.retryClosed(p, resp, err)
	}
	e.receive(p, resp, err)
}
