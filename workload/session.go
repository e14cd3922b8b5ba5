package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Conversations (format 1.2). A session is a conversation of several
// turns sent one after another: turn 1 is an ordinary count-up prompt
// (after the shared system prompt, if any); every later turn carries only
// a new user message, and the replay puts before it everything the turn
// before sent plus the answer it actually got. So a server with a prefix
// cache finds each turn's conversation so far in its cache, as it would
// with real chat traffic.

// FollowUp is the user message of every turn after the first. It asks for
// the count again from 1 (not from where the answer stopped) so that the
// analysis's count-up check holds for every turn's answer.
const FollowUp = "Thank you. Now count up from 1 again, one number after another, " +
	"separated by commas: 1, 2, 3, 4, 5, and so on. Keep counting and write nothing else."

// systemHead starts the system prompt; filler prose makes up the rest of
// its --system-tokens.
const systemHead = "You are a careful assistant. Background notes:"

// Limits on session values: past them a value is a typo.
const (
	maxTurns = 1000
	// MaxThink bounds one think time: a pause of more than an hour
	// between turns is a unit mistake (--think-time 2000 meant 2s).
	MaxThink = time.Hour
)

// turnsSpec is a parsed --turns: a uniform whole number in [lo, hi].
type turnsSpec struct{ lo, hi int }

func parseTurns(s string) (turnsSpec, error) {
	bad := func() error {
		return fieldErr("Turns", fmt.Sprintf("%q is not a number of turns", s), fmt.Sprintf("use N or LO..HI (LO:HI) with whole numbers from 1 to %d, e.g. 4 or 2..8", maxTurns))
	}
	lo, hi, isRange := cutRange(s)
	a, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil {
		return turnsSpec{}, bad()
	}
	b := a
	if isRange {
		if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
			return turnsSpec{}, bad()
		}
	}
	if a < 1 || b < 1 {
		return turnsSpec{}, fieldErr("Turns", fmt.Sprintf("%q has a session of no turns", s), "use 1 or more turns per session")
	}
	if a > maxTurns || b > maxTurns {
		return turnsSpec{}, fieldErr("Turns", fmt.Sprintf("%q is more than %d turns", s, maxTurns), fmt.Sprintf("use at most %d", maxTurns))
	}
	if b < a {
		return turnsSpec{}, fieldErr("Turns", fmt.Sprintf("%q runs backwards", s), fmt.Sprintf("write the smaller number first: %d..%d", b, a))
	}
	return turnsSpec{a, b}, nil
}

// cutRange splits LO..HI, or LO:HI as --range and --window write ranges.
func cutRange(s string) (lo, hi string, ok bool) {
	if lo, hi, ok = strings.Cut(s, ".."); ok {
		return lo, hi, true
	}
	return strings.Cut(s, ":")
}

func (t turnsSpec) draw(rng *rand.Rand) int { return t.lo + intN(rng, t.hi-t.lo+1) }

// thinkSpec is a parsed --think-time: a constant, a uniform range, or an
// exponential distribution with a mean, in nanoseconds.
type thinkSpec struct {
	kind   string // "constant", "uniform" or "exp"
	lo, hi int64  // constant: lo; uniform: [lo, hi]; exp: lo is the mean
}

// ParseThink reads a think time: DURATION (constant), LO..HI (uniform) or
// exp:MEAN (exponential), durations as Go writes them (500ms, 2s, 0).
func ParseThink(s string) (thinkSpec, error) {
	fix := "use a duration (2s), a uniform range (1s..3s or 1s:3s) or exp:MEAN (exp:2s), none negative"
	dur := func(v string) (int64, error) {
		v = strings.TrimSpace(v)
		if v == "0" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fieldErr("ThinkTime", fmt.Sprintf("%q is not a think time", s), fix)
		}
		if d < 0 {
			return 0, fieldErr("ThinkTime", fmt.Sprintf("%q is negative", s), "a pause between turns is 0 or more")
		}
		if d > MaxThink {
			return 0, fieldErr("ThinkTime", fmt.Sprintf("%q is more than %v", s, MaxThink), "use at most 1h between turns")
		}
		return int64(d), nil
	}
	switch {
	case s == "":
		return thinkSpec{kind: "constant"}, nil
	case strings.HasPrefix(s, "exp:"):
		m, err := dur(s[len("exp:"):])
		if err != nil {
			return thinkSpec{}, err
		}
		return thinkSpec{kind: "exp", lo: m}, nil
	case strings.Contains(s, "..") || strings.Contains(s, ":"):
		a, b, _ := cutRange(s)
		lo, err := dur(a)
		if err != nil {
			return thinkSpec{}, err
		}
		hi, err := dur(b)
		if err != nil {
			return thinkSpec{}, err
		}
		if hi < lo {
			return thinkSpec{}, fieldErr("ThinkTime", fmt.Sprintf("%q runs backwards", s), "write the shorter time first")
		}
		return thinkSpec{kind: "uniform", lo: lo, hi: hi}, nil
	}
	d, err := dur(s)
	if err != nil {
		return thinkSpec{}, err
	}
	return thinkSpec{kind: "constant", lo: d}, nil
}

// draw is one think time in nanoseconds, the same on every machine
// (detmath's exponential and integer draws).
func (t thinkSpec) draw(rng *rand.Rand) int64 {
	switch t.kind {
	case "uniform":
		span := t.hi - t.lo
		// Millisecond steps keep intN within int on every platform.
		ms := int(span / int64(time.Millisecond))
		return min(t.lo+int64(intN(rng, ms+1))*int64(time.Millisecond), t.hi)
	case "exp":
		d := int64(math.Round(float64(expo(rng) * float64(t.lo))))
		return min(d, int64(MaxThink))
	}
	return t.lo
}

// sessionConfig is what the session planner needs from BuildConfig.
type sessionConfig struct {
	turns turnsSpec
	think thinkSpec
}

// planSession appends one session's turns to plan: turn 1 of n input
// tokens, then turns−1 follow-ups, with think times drawn from rng.
func planSession(plan []plannedRequest, sc sessionConfig, rng *rand.Rand, phase, session, slot int, offset int64, n, out, followTokens int) []plannedRequest {
	turns := sc.turns.draw(rng)
	for t := 1; t <= turns; t++ {
		p := plannedRequest{phase: phase, slot: slot, in: n, out: out, session: session, turn: t}
		if t == 1 {
			p.offset = offset
		} else {
			p.in = followTokens
			p.think = sc.think.draw(rng)
		}
		plan = append(plan, p)
	}
	return plan
}

// systemPrompt makes the shared system prompt of exactly k tokens.
func (kit *promptKit) systemPrompt(k int) (string, error) {
	head := kit.tok.Count(systemHead)
	if k <= head {
		return "", fieldErr("SystemTokens", fmt.Sprintf("%d tokens cannot hold the system prompt's opening (%d tokens)", k, head), fmt.Sprintf("use at least %d", head+1))
	}
	adjust := 0
	for attempt := 0; ; attempt++ {
		var b strings.Builder
		b.Grow(k * 8)
		b.WriteString(systemHead)
		newProse(kit.words, kit.seed, streamSystem).write(&b, k-head+adjust)
		text := b.String()
		got := kit.tok.Count(text)
		if got == k {
			return text, nil
		}
		if attempt == 3 {
			return "", fmt.Errorf("could not make a system prompt of exactly %d tokens with tokenizer %s (got %d)", k, kit.tok.Name(), got)
		}
		adjust += k - got
	}
}

// HasSessions reports whether the workload is made of conversations.
func (wl *Workload) HasSessions() bool {
	for _, p := range wl.Header.Phases {
		if p.Sessions > 0 {
			return true
		}
	}
	return false
}

// checkSessions validates the session settings against the schedule; nil
// means single requests.
func checkSessions(cfg BuildConfig, kind string) (*sessionConfig, error) {
	if cfg.SystemTokens < 0 || cfg.SystemTokens > MaxInputTokens {
		return nil, fieldErr("SystemTokens", fmt.Sprintf("%d is out of range", cfg.SystemTokens), fmt.Sprintf("use 1 to %d tokens (0: no system prompt)", MaxInputTokens))
	}
	if cfg.SystemTokens > 0 && cfg.Shape != ShapeChat {
		return nil, fieldErr("SystemTokens", "needs chat requests: a system prompt is a chat message", "drop --shape completion")
	}
	if cfg.Turns == "" {
		switch {
		case cfg.ThinkTime != "":
			return nil, fieldErr("ThinkTime", "is the pause between turns of a session", "add --turns N (or LO..HI)")
		case cfg.Sessions != 0:
			return nil, fieldErr("Sessions", "counts sessions", "add --turns N (or LO..HI), or count single requests with --requests")
		}
		return nil, nil
	}
	turns, err := parseTurns(cfg.Turns)
	if err != nil {
		return nil, err
	}
	think, err := ParseThink(cfg.ThinkTime)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Shape != ShapeChat:
		return nil, fieldErr("Turns", "needs chat requests: a session is a conversation of messages", "drop --shape completion")
	case kind == KindTrace:
		return nil, fieldErr("Turns", "applies to burst, closed and rate schedules", "a trace:FILE schedule takes its requests from the log")
	case cfg.Requests != 0:
		return nil, fieldErr("Requests", "counts single requests; with --turns the schedule counts sessions", "use --sessions N")
	case cfg.Sessions < 0 || cfg.Sessions > MaxRequests:
		return nil, fieldErr("Sessions", fmt.Sprintf("%d is out of range", cfg.Sessions), fmt.Sprintf("use 1 to %d", MaxRequests))
	case cfg.Sessions != 0 && kind == KindBurst:
		return nil, fieldErr("Sessions", "does not apply to burst schedules", "a burst of C starts C sessions: drop --sessions")
	case cfg.Sessions != 0 && cfg.Duration != 0:
		return nil, fieldErr("Sessions", "and --duration both bound the phase", "give one of them")
	}
	return &sessionConfig{turns: turns, think: think}, nil
}

// planSessions lays out phases of sessions: per input length, level (or
// rate) and repeat, one phase whose sessions start on the schedule.
func planSessions(h *Header, sp schedSpec, arr arrival, cfg BuildConfig, sc sessionConfig, kit *promptKit) ([]plannedRequest, error) {
	follow := kit.tok.Count(FollowUp)
	var plan []plannedRequest
	err := layPhases(h, sp, arr, cfg, cfg.Sessions, func(pi int, members []member) error {
		h.Phases[pi].Sessions = len(members)
		rng := rand.New(rand.NewPCG(uint64(cfg.Seed), streamSession+uint64(pi)))
		from := len(plan)
		for s, m := range members {
			plan = planSession(plan, sc, rng, pi, s, m.slot, m.offset, h.Phases[pi].InputTokens, cfg.MaxTokens, follow)
		}
		// The phase's request count is known once its sessions drew their
		// turns.
		h.Phases[pi].Requests = len(plan) - from
		if len(plan) > MaxRequests {
			return fmt.Errorf("the workload would hold more than %d requests: use fewer sessions, turns, levels or repeats", MaxRequests)
		}
		return nil
	})
	return plan, err
}

// turnCheck validates the session fields of a file's requests as they
// arrive: a file edited by hand must not make the replay wait for a turn
// that never comes, send turns out of order, or put arbitrary bytes in an
// HTTP header (the session id is sent as one).
type turnCheck struct {
	last     map[string]sessionSeen
	sessions []int // distinct sessions per phase
}

type sessionSeen struct{ phase, turn int }

func newTurnCheck(phases int) *turnCheck {
	return &turnCheck{last: map[string]sessionSeen{}, sessions: make([]int, phases)}
}

// maxSessionID bounds a session id's length (it is sent as a header value).
const maxSessionID = 128

func (c *turnCheck) add(wl *Workload, r *Request) error {
	ph := wl.Header.Phases[r.Phase]
	if r.Session == "" {
		if r.Turn != 0 || r.Think != 0 {
			return fmt.Errorf("request %q has a turn or think time but no session", r.ID)
		}
		if ph.Sessions > 0 {
			return fmt.Errorf("request %q has no session, but phase %d is made of %d sessions", r.ID, ph.Index, ph.Sessions)
		}
		return nil
	}
	if ph.Sessions == 0 {
		return fmt.Errorf("request %q is a turn of session %q, but phase %d has no sessions", r.ID, r.Session, ph.Index)
	}
	if len(r.Session) > maxSessionID || !sessionIDOK(r.Session) {
		return fmt.Errorf("request %q has session id %q: use up to %d letters, digits and . _ : -", r.ID, r.Session, maxSessionID)
	}
	if r.Turn < 1 || r.Turn > maxTurns {
		return fmt.Errorf("request %q is turn %d of its session (1 to %d)", r.ID, r.Turn, maxTurns)
	}
	if r.Think < 0 || r.Think > int64(MaxThink) {
		return fmt.Errorf("request %q has think time %d ns (0 to %v)", r.ID, r.Think, MaxThink)
	}
	if r.Turn > 1 && len(r.Messages) == 0 && ph.Context != ContextLog {
		return fmt.Errorf("request %q is turn %d but has no messages: a session is a chat conversation", r.ID, r.Turn)
	}
	prev, seen := c.last[r.Session]
	switch {
	case r.Turn == 1 && seen:
		return fmt.Errorf("session %q starts twice (request %q)", r.Session, r.ID)
	case r.Turn > 1 && (!seen || prev.turn != r.Turn-1):
		return fmt.Errorf("request %q is turn %d of session %q, which is not right after its turn %d", r.ID, r.Turn, r.Session, r.Turn-1)
	case r.Turn > 1 && prev.phase != r.Phase:
		return fmt.Errorf("session %q has turns in phases %d and %d", r.Session, prev.phase, r.Phase)
	}
	if r.Turn == 1 {
		c.sessions[r.Phase]++
	}
	c.last[r.Session] = sessionSeen{phase: r.Phase, turn: r.Turn}
	return nil
}

func (c *turnCheck) done(wl *Workload) error {
	for i, p := range wl.Header.Phases {
		if p.Sessions != c.sessions[i] {
			return fmt.Errorf("phase %d announces %d sessions and holds %d", i, p.Sessions, c.sessions[i])
		}
	}
	return nil
}

func sessionIDOK(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == ':' || b == '-') {
			return false
		}
	}
	return s != ""
}
