package sim

import (
	"net/http"
	"sync"
)

// SessionHeader is the header the simulator reads a conversation's id
// from: llmreplay replay's default --session-header. The simulator counts
// the requests that carry one and the distinct ids, on /metrics, so a
// test (or a user checking a router's configuration) can see that every
// turn arrived with its session's id.
const SessionHeader = "X-Session-ID"

// maxSessionIDs bounds the ids remembered for the distinct count; past
// it the gauge stops growing (a test never comes near).
const maxSessionIDs = 1 << 20

// sessions counts the session ids the simulator has seen.
type sessions struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// see notes r's session header, if any.
func (s *Server) seeSession(r *http.Request) {
	id := r.Header.Get(SessionHeader)
	if id == "" {
		return
	}
	s.met.sessionRequests.Inc()
	s.sess.mu.Lock()
	defer s.sess.mu.Unlock()
	if s.sess.ids == nil {
		s.sess.ids = map[string]struct{}{}
	}
	if _, ok := s.sess.ids[id]; !ok && len(s.sess.ids) < maxSessionIDs && len(id) <= 256 {
		s.sess.ids[id] = struct{}{}
		s.met.sessionsSeen.Set(float64(len(s.sess.ids)))
	}
}
