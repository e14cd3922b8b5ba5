package replay

import (
	"net"
	"sync/atomic"
	"time"
)

// Response headers are read by net/http, out of the engine's sight: a
// server that sends them a byte at a time used to be reported as sending
// "no response byte", and its bytes did not count against the idle
// timeout, which is the time between response bytes. Every connection the
// client dials is a watchedConn; while a request waits for its headers it
// watches its connection, so each byte read resets its idle timer and is
// counted for the message should the headers never finish.

// watchedConn is a net.Conn whose reads are reported to its watcher.
type watchedConn struct {
	net.Conn
	w atomic.Pointer[headerWatch]
	// k, when set, reads through recvmsg and keeps the kernel's receive
	// stamp of each read (kts.go).
	k *kstamp
	// kwhy says why a connection of a kernel-stamped run has no k.
	kwhy string
	// hold, while set, keeps what is written for the release to write
	// (dispatch_held.go).
	hold atomic.Pointer[heldSend]
}

func (c *watchedConn) Read(p []byte) (n int, err error) {
	if c.k != nil {
		n, err = c.k.read(p)
	} else {
		n, err = c.Conn.Read(p)
	}
	if n > 0 {
		if w := c.w.Load(); w != nil {
			w.bytes.Add(int64(n))
			if w.idle != nil {
				w.idle.touch()
			}
		}
	}
	return n, err
}

// Close closes the connection. With kernel stamps it first ends the
// reading coroutine that holds the descriptor between reads
// (kts_linux.go): the socket's Close waits for every holder to let go. A
// read in progress is woken by the Close itself, and its reader ends the
// coroutine.
func (c *watchedConn) Close() error {
	if c.k != nil {
		c.k.io.close()
	}
	return c.Conn.Close()
}

// SetReadDeadline and SetDeadline set the user's read deadline, which with
// kernel stamps replaces the reading coroutine's own (kts_linux.go).
func (c *watchedConn) SetReadDeadline(t time.Time) error {
	if c.k != nil {
		return c.k.io.setUserDeadline(t, c.Conn.SetReadDeadline)
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *watchedConn) SetDeadline(t time.Time) error {
	if c.k != nil {
		return c.k.io.setUserDeadline(t, c.Conn.SetDeadline)
	}
	return c.Conn.SetDeadline(t)
}

// headerWatch is one request's view of its connection until its headers
// arrive.
type headerWatch struct {
	bytes atomic.Int64
	idle  *idleTimer // nil when the idle timeout is off
	conn  atomic.Pointer[watchedConn]
}

// attach starts watching c (httptrace's GotConn).
func (w *headerWatch) attach(c net.Conn) {
	if wc, ok := c.(*watchedConn); ok {
		wc.w.Store(w)
		w.conn.Store(wc)
	}
}

// detach stops watching: the body has its own idle reader, and the
// connection goes to the next request.
func (w *headerWatch) detach() {
	if wc := w.conn.Swap(nil); wc != nil {
		wc.w.CompareAndSwap(w, nil)
	}
}
