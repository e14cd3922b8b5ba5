package replay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A server may announce keep-alive and close the connection just after
// each response: llama-server does, about 2 ms after every streamed
// answer. A request the client sends on that connection before it has
// seen the close gets FIN before any response byte. The server never read
// it (it had closed the connection), so it is sent once more, on a new
// connection, and counted as a retry in the record's notes and the run's
// summary, never as a server failure. A request that fails that way on a
// connection of its own, or fails again, is the server's failure as ever.
//
// net/http retries such a request itself only when it is idempotent; a
// POST is not, and its retry would be invisible to the timing: the engine
// retries, re-stamps the send and says so.

// retrier is the client a retry goes out on: the run's transport with
// keep-alive off, so the retry dials a connection of its own instead of
// taking another idle one the server may have closed the same way. Made
// on the first retry.
type retrier struct {
	once   sync.Once
	client *http.Client
}

func (r *retrier) get(c *http.Client) *http.Client {
	r.once.Do(func() { r.client = freshClient(c) })
	return r.client
}

// freshClient is c with keep-alive off on its transport (and the run's
// --header values still added).
func freshClient(c *http.Client) *http.Client {
	rt := c.Transport
	wrap := func(t http.RoundTripper) http.RoundTripper { return t }
	if ht, ok := rt.(*headerTransport); ok {
		rt = ht.rt
		wrap = func(t http.RoundTripper) http.RoundTripper { return &headerTransport{rt: t, headers: ht.headers} }
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		return c
	}
	t := tr.Clone()
	t.DisableKeepAlives = true
	return &http.Client{Transport: wrap(t), CheckRedirect: c.CheckRedirect}
}

// send sends p's request, and once more on a new connection when the
// first attempt went out on a kept-alive connection the server had closed
// (closedBeforeAnswer).
func (e *engine) send(p *prepared) (*http.Response, error) {
	resp, err := e.client.Do(p.req)
	return e.retryClosed(p, resp, err)
}

// retryClosed is the outcome of p's first attempt (resp, err), or of a
// second one on a new connection when the first went out on a kept-alive
// connection the server had closed.
func (e *engine) retryClosed(p *prepared, resp *http.Response, err error) (*http.Response, error) {
	if err == nil || !closedBeforeAnswer(err) {
		return resp, err
	}
	return e.retryOnNew(p, resp, err)
}

// retryOnNew sends p once more on a new connection when its first attempt
// (which failed with err) went out on a kept-alive connection before any
// response byte and the engine did not cut it; else it returns the first
// attempt's outcome.
func (e *engine) retryOnNew(p *prepared, resp *http.Response, err error) (*http.Response, error) {
	if !p.reused || p.watch.bytes.Load() != 0 || reasonOf(p.ctx) != reasonNone || p.req.GetBody == nil {
		return resp, err
	}
	first := p.rec.Sent
	body, berr := p.req.GetBody()
	if berr != nil {
		return resp, err
	}
	p.watch.detach()
	req := p.req.Clone(p.req.Context()) // the same trace hooks: GotConn sees the new connection
	req.Body = body
	p.reused = false
	if p.idle != nil {
		p.idle.start()
	}
	p.rec.Sent = e.now()
	addNote(p.rec, fmt.Sprintf("retried once on a new connection: the server had closed the kept-alive connection the request was first sent on %v earlier (%s before any response byte)",
		time.Duration(p.rec.Sent-first).Round(time.Microsecond), cleanMessage(err)))
	if !p.rec.Warmup {
		e.mu.Lock()
		e.sum.Retried++
		e.mu.Unlock()
	}
	return e.retry.get(e.client).Do(req)
}

// closedBeforeAnswer reports whether err is the server closing the
// connection before the response's first byte: FIN read where the status
// line should be (io.EOF, which net/http passes through; a response cut
// after its first byte is io.ErrUnexpectedEOF instead), or the close seen
// while the connection was idle.
func closedBeforeAnswer(err error) bool {
	return errors.Is(err, io.EOF) || strings.Contains(err.Error(), "server closed idle connection")
}
