package replay

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Session headers: the header that carries a conversation's id on every
// one of its turns, so that a router with session affinity (llm-d's
// inference scheduler, a gateway's sticky sessions) can keep the
// conversation on the replica whose cache holds it.
const (
	DefaultSessionHeader = "X-Session-ID"
	// SessionHeaderOff sends no session header.
	SessionHeaderOff = "off"
)

// sessionPhase runs a phase of conversations (workload 1.2): the phase's
// schedule starts sessions, not requests (a burst starts its sessions
// together, a closed loop's worker runs one session after another, a rate
// phase starts each at its first turn's offset), and each session sends
// its turns one after another, each Think after the previous response
// ended, with the conversation so far (the answers actually received)
// before the turn's new message.
type sessionPhase struct{}

var _ phaseKind = sessionPhase{}

// session is one conversation's turns, in order.
type session struct {
	id    string
	turns []*workload.Request
	// whole: each turn carries its whole prompt (a log's sessions,
	// workload.ContextLog), sent as it is, a later turn at its Offset from
	// start or when the answer before it ended, whichever is later.
	whole bool
	start int64
}

// sessionsOf groups a phase's requests by session, in the order the
// sessions start in the file. The decoder has checked that turns follow
// one another.
func sessionsOf(rs []*workload.Request) []*session {
	var out []*session
	byID := map[string]*session{}
	for _, r := range rs {
		s := byID[r.Session]
		if s == nil {
			s = &session{id: r.Session}
			byID[r.Session] = s
			out = append(out, s)
		}
		s.turns = append(s.turns, r)
	}
	return out
}

func (sessionPhase) run(ctx context.Context, e *engine, ph workload.Phase, rs []*workload.Request) {
	ss := sessionsOf(rs)
	switch ph.Kind {
	case workload.KindBurst:
		if ctx.Err() != nil {
			e.countNotSent(len(rs))
			return
		}
		gate := make(chan struct{})
		var release int64
		var wg sync.WaitGroup
		for _, s := range ss {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				e.runSession(ctx, s, release)
			}()
		}
		runtime.Gosched()
		release = e.now()
		close(gate)
		wg.Wait()
	case workload.KindClosed:
		pool(ph.Concurrency, len(ss), func(i int) { e.runSession(ctx, ss[i], sendNow) })
	default: // rate: open loop over session starts
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].turns[0].Offset < ss[j].turns[0].Offset })
		phaseStart := e.now()
		for _, s := range ss {
			s.whole, s.start = ph.Context == workload.ContextLog, phaseStart
		}
		var wg sync.WaitGroup
		for i, s := range ss {
			deadline := phaseStart + s.turns[0].Offset
			if !e.waitUntil(ctx, deadline) {
				for _, rest := range ss[i:] {
					e.countNotSent(len(rest.turns))
				}
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.runSession(ctx, s, deadline)
			}()
			runtime.Gosched()
		}
		wg.Wait()
	}
}

func (e *engine) countNotSent(n int) {
	e.mu.Lock()
	e.sum.NotSent += n
	e.mu.Unlock()
}

// turnResult is what a finished turn hands to the next one.
type turnResult struct {
	answer string
	done   int64
	err    *trace.Error
}

// sendNow as runSession's scheduled time sends the first turn as soon as
// it is built.
const sendNow = -1

// runSession sends one conversation's turns, the first at scheduled. A
// turn that fails ends the conversation (the next turn would need its
// answer): the turns after it are recorded as not sent, naming the
// failure, so the trace holds every turn of the workload.
func (e *engine) runSession(ctx context.Context, s *session, scheduled int64) {
	var history []workload.Message
	histTokens := 0 // the conversation so far, under the workload's tokenizer
	for i, r := range s.turns {
		if ctx.Err() != nil {
			e.countNotSent(len(s.turns) - i)
			return
		}
		// The request is built before its send time, as in the open-loop
		// phases: building a long conversation's body is not lateness.
		req := *r
		if e.cfg.Salt {
			req = req.WithSalt(e.salt)
		}
		// The salt is applied here, once: the history must hold the
		// words actually sent.
		req.Salt = workload.Span{}
		own := r.InputTokens
		if len(req.Messages) > 1 && req.Messages[0].Role == "system" {
			own += e.cfg.Workload.Header.Params.SystemTokens
		}
		if len(history) > 0 && !s.whole {
			req.Messages = append(history[:len(history):len(history)], req.Messages...)
		}
		p := e.prepare(&req, false)
		p.rec.Session, p.rec.Turn = s.id, r.Turn
		if histTokens >= 0 {
			p.rec.SentInputTokens = histTokens + own
		}
		if e.sessionHeader != "" && p.req != nil {
			p.req.Header.Set(e.sessionHeader, s.id)
		}
		if scheduled == sendNow {
			// A closed loop's worker is free: the turn is due now that
			// it is built, as in closedPhase.
			scheduled = e.now()
		}
		if i > 0 && !e.waitUntil(ctx, scheduled) {
			p.cancel(errCancelled)
			e.countNotSent(len(s.turns) - i)
			return
		}
		var res turnResult
		p.onDone = func(rec *trace.Record) {
			res.done, res.err = rec.Done, rec.Error
			var b strings.Builder
			for k := range rec.Chunks {
				b.WriteString(rec.Chunks[k].Text)
			}
			res.answer = b.String()
		}
		e.inflight.Add(1)
		e.do(p, scheduled)
		if res.err != nil {
			if ctx.Err() != nil {
				// The run was stopped: the later turns are unsent as in
				// every other phase, not casualties of a server failure.
				e.countNotSent(len(s.turns) - i - 1)
				return
			}
			e.notSentTurns(s, i+1, r.Turn, res.err)
			return
		}
		if i+1 == len(s.turns) {
			return
		}
		if s.whole {
			// The log's next turn holds the conversation as it was then:
			// it waits for this answer, and for its own time in the log.
			next := s.turns[i+1]
			scheduled = max(res.done+next.Think, s.start+next.Offset)
			continue
		}
		history = append(req.Messages[:len(req.Messages):len(req.Messages)], workload.Message{Role: "assistant", Content: res.answer})
		if histTokens >= 0 && e.sessTok != nil {
			histTokens = p.rec.SentInputTokens + e.sessTok.Count(res.answer)
		} else {
			histTokens = -1
		}
		scheduled = res.done + s.turns[i+1].Think
	}
}

// notSentTurns records the turns of s from index from on as not sent,
// because turn failedTurn failed with why.
func (e *engine) notSentTurns(s *session, from, failedTurn int, why *trace.Error) {
	msg := fmt.Sprintf("turn %d of the session failed (%s): the conversation cannot go on without its answer", failedTurn, why.Class)
	for _, r := range s.turns[from:] {
		rec := &trace.Record{
			ID: r.ID, Index: r.Index, Phase: r.Phase,
			InputTokens: r.InputTokens, MaxTokens: r.MaxTokens,
			Session: s.id, Turn: r.Turn,
			Error: &trace.Error{Class: trace.ErrNotSent, Message: msg},
		}
		e.mu.Lock()
		e.sum.SessionNotSent++
		e.mu.Unlock()
		e.queueRecord(rec)
	}
}

// resolveSessions checks the session header and loads the workload's
// tokenizer, which counts the answers a conversation sends back.
func resolveSessions(c *Config, r *Resolved) error {
	switch h := c.SessionHeader; {
	case h == "":
		c.SessionHeader = DefaultSessionHeader
	case h == SessionHeaderOff:
	case !validHeaderName(h) || len(h) > 256:
		return fieldErr("SessionHeader", fmt.Sprintf("%q is not an HTTP header name", h), "use letters, digits and - (e.g. X-Session-ID), or off")
	default:
		if why, ok := ownedHeaders[http.CanonicalHeaderKey(h)]; ok {
			return fieldErr("SessionHeader", fmt.Sprintf("%s is llmreplay's to set (%s)", http.CanonicalHeaderKey(h), why), "name another header, e.g. X-Session-ID")
		}
	}
	tok, _, err := workload.Tokenizer(c.Workload.Header, c.Tokenizer)
	if err != nil {
		return fieldErr("Tokenizer", "cannot be recalled to count the conversations' answers ("+err.Error()+")", "give the workload's tokenizer.json with --tokenizer")
	}
	// Count once now: a tokenizer builds its tables on first use (about
	// 0.1 s for o200k_base), which must not delay a second turn's send.
	tok.Count("warm up")
	r.sessTok = tok
	return nil
}

// warmTurns are the first turns of a workload's sessions (and its single
// requests), the requests that make sense sent alone.
func warmTurns(reqs []workload.Request) []workload.Request {
	var out []workload.Request
	for _, r := range reqs {
		if r.Turn <= 1 {
			out = append(out, r)
		}
	}
	return out
}
