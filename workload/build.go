package workload

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/version"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// Defaults of the seeds' benchmark.
const (
	DefaultTokenizer   = "o200k_base"
	DefaultInputTokens = 800
	DefaultMaxTokens   = 256
	DefaultSchedule    = "burst:1,4,8,16,32"
	DefaultSaltWords   = 4
	DefaultPrefix      = "unique"
	DefaultTimeScale   = 1.0
	// DefaultBurstRepeats is the fewest runs per level whose median has a
	// bounded 95% order-statistic interval (2·(1/2)⁶ = 0.031 ≤ 0.05, while
	// five runs leave 0.0625): with fewer, every per-run metric of the
	// sweep (aggregate tok/s) is inconclusive in check. The seeds took 5.
	DefaultBurstRepeats = 6
	// NoSaltWords in BuildConfig.SaltWords builds prompts without a salt
	// slot (0 there means DefaultSaltWords).
	NoSaltWords = -1
)

// Limits past which a value is a typo rather than a plan.
const (
	MaxInputTokens  = 1 << 20
	MaxOutputTokens = 1 << 20
	maxSaltWords    = 64
	maxLengths      = 1024
	// maxTotalTokens bounds the whole workload (~3 GB of prompt text).
	maxTotalTokens = 500_000_000
)

// BuildConfig holds the generator's inputs. Zero values take the defaults.
type BuildConfig struct {
	// Tokenizer is a tiktoken encoding name or the path of a HuggingFace
	// tokenizer.json (see tokenize.Load). Tok, when set, is used instead.
	Tokenizer string
	Tok       tokenize.Tokenizer

	Shape       Shape  // ShapeChat (default) or ShapeCompletion
	InputTokens []int  // one phase per length; default [800]
	MaxTokens   int    // default 256
	Prefix      string // "unique" (default), "shared" or "shared:K"

	Schedule string // burst:1,4,8 | closed:4,8 | rate:R | trace:FILE
	Repeats  int    // phases per level; default 6 (DefaultBurstRepeats) for burst, else 1
	Requests int    // per phase, closed (default 4×C) and rate (default 100)
	// Duration bounds each rate phase in time instead of a count: the
	// phase holds the arrivals that fall before Duration (rate only).
	Duration time.Duration
	Arrival  string // rate: poisson (default), constant or gamma:SHAPE
	Seed     int64

	TimeScale float64 // trace: multiplies the log's times (0.5 = twice as fast); default 1
	Window    string  // trace: START:END seconds of the log
	// OrphanTurns says what to do with a log's turn whose parent_chat_id
	// is on no line: "error" (the default, "") refuses the log, "first"
	// makes the turn its session's first (a log cut from a longer one).
	OrphanTurns string

	SaltWords int // one-token words in each prompt's salt slot; default 4, NoSaltWords for none

	// Turns makes the workload of conversations (format 1.2): "4" or
	// "2..8" turns per session (uniform). Empty: single requests.
	Turns string
	// ThinkTime is the pause between a response's end and the next turn:
	// a duration, LO..HI (uniform) or exp:MEAN. Sessions only.
	ThinkTime string
	// Sessions per closed phase (default 4×C) or rate phase (default
	// 100); a burst of C starts C sessions. Sessions only.
	Sessions int
	// SystemTokens is the length of a system prompt every request (every
	// session's first turn) starts with, identical across them (chat).
	SystemTokens int
}

// tokenPath is the tokenizer.json path a workload records: the one it was
// loaded from, when it was (cfg.Tok given directly has none).
func tokenPath(cfg BuildConfig) string {
	if cfg.Tok != nil {
		return ""
	}
	return tokenize.RecordedPath(cfg.Tokenizer)
}

// fieldErr is a BuildConfig value that cannot be used; the CLI names the
// flag that set it.
func fieldErr(field, problem, fix string) error {
	return fielderr.New("workload: BuildConfig", field, problem, fix)
}

// plannedRequest is a request before its prompt is made.
type plannedRequest struct {
	phase     int
	slot      int
	offset    int64
	in, out   int
	hash      []int64
	blockSize int
	// session is the session's index in its phase and turn counts from
	// 1; turn 0 is a single request. think is the pause before the turn.
	session, turn int
	think         int64
	// chat names the session after the request log's chat id of its
	// first turn; whole says the turn holds its whole prompt (ContextLog).
	chat  string
	whole bool
}

// Build generates a workload: every prompt exactly its input token count
// under the tokenizer, laid out in phases by the schedule. The same config
// gives the same workload, byte for byte, on any machine.
func Build(cfg BuildConfig) (*Workload, error) {
	cfg.Tokenizer = cmp.Or(cfg.Tokenizer, DefaultTokenizer)
	cfg.Shape = cmp.Or(cfg.Shape, ShapeChat)
	if cfg.Shape != ShapeChat && cfg.Shape != ShapeCompletion {
		return nil, fieldErr("Shape", fmt.Sprintf("%q is not a shape", cfg.Shape), "use chat or completion")
	}
	if len(cfg.InputTokens) == 0 {
		cfg.InputTokens = []int{DefaultInputTokens}
	}
	if len(cfg.InputTokens) > maxLengths {
		return nil, fieldErr("InputTokens", fmt.Sprintf("has %d lengths", len(cfg.InputTokens)), fmt.Sprintf("use at most %d", maxLengths))
	}
	for _, n := range cfg.InputTokens {
		if n < 1 || n > MaxInputTokens {
			return nil, fieldErr("InputTokens", fmt.Sprintf("%d is not an input length", n), fmt.Sprintf("use 1 to %d tokens", MaxInputTokens))
		}
	}
	cfg.MaxTokens = cmp.Or(cfg.MaxTokens, DefaultMaxTokens)
	if cfg.MaxTokens < 1 || cfg.MaxTokens > MaxOutputTokens {
		return nil, fieldErr("MaxTokens", fmt.Sprintf("%d is out of range", cfg.MaxTokens), fmt.Sprintf("use 1 to %d", MaxOutputTokens))
	}
	cfg.Prefix = cmp.Or(cfg.Prefix, DefaultPrefix)
	cfg.Schedule = cmp.Or(cfg.Schedule, DefaultSchedule)
	switch {
	case cfg.SaltWords == 0:
		cfg.SaltWords = DefaultSaltWords
	case cfg.SaltWords == NoSaltWords:
		cfg.SaltWords = 0
	case cfg.SaltWords < 0 || cfg.SaltWords > maxSaltWords:
		return nil, fieldErr("SaltWords", fmt.Sprintf("%d is out of range", cfg.SaltWords), fmt.Sprintf("use 0 to %d", maxSaltWords))
	}
	if cfg.Repeats < 0 || cfg.Repeats > maxRepeats {
		return nil, fieldErr("Repeats", fmt.Sprintf("%d is out of range", cfg.Repeats), fmt.Sprintf("use 1 to %d", maxRepeats))
	}
	if cfg.Requests < 0 || cfg.Requests > MaxRequests {
		return nil, fieldErr("Requests", fmt.Sprintf("%d is out of range", cfg.Requests), fmt.Sprintf("use 1 to %d", MaxRequests))
	}
	cfg.TimeScale = cmp.Or(cfg.TimeScale, DefaultTimeScale)
	if !(cfg.TimeScale > 0 && cfg.TimeScale <= 1000) {
		return nil, fieldErr("TimeScale", fmt.Sprintf("%g is out of range", cfg.TimeScale), "use a factor above 0 and at most 1000 (0.5 replays a log twice as fast)")
	}
	prefix, err := parsePrefix(cfg.Prefix)
	if err != nil {
		return nil, err
	}
	sp, err := parseSchedule(cfg.Schedule)
	if err != nil {
		return nil, err
	}
	var arr arrival
	if sp.kind == KindRate {
		if arr, err = parseArrival(cfg.Arrival); err != nil {
			return nil, err
		}
		cfg.Arrival = arr.kind
		if arr.kind == "gamma" {
			cfg.Arrival = fmt.Sprintf("gamma:%g", arr.shape)
		}
	} else if cfg.Arrival != "" {
		return nil, fieldErr("Arrival", "applies to rate:R schedules only", fmt.Sprintf("drop it for a %s schedule", sp.kind))
	}
	switch {
	case cfg.OrphanTurns != "" && cfg.OrphanTurns != OrphansError && cfg.OrphanTurns != OrphansFirst:
		return nil, fieldErr("OrphanTurns", fmt.Sprintf("%q is not a choice", cfg.OrphanTurns), "use error or first")
	case cfg.OrphanTurns == OrphansFirst && sp.kind != KindTrace:
		return nil, fieldErr("OrphanTurns", "applies to trace:FILE schedules only", fmt.Sprintf("drop it for a %s schedule", sp.kind))
	}
	if cfg.Window != "" && sp.kind != KindTrace {
		return nil, fieldErr("Window", "applies to trace:FILE schedules only", fmt.Sprintf("drop it for a %s schedule", sp.kind))
	}
	if cfg.Duration != 0 {
		switch {
		case sp.kind != KindRate:
			return nil, fieldErr("Duration", "applies to rate:R schedules only", fmt.Sprintf("drop it for a %s schedule (its phases end when their requests do)", sp.kind))
		case cfg.Requests != 0:
			return nil, fieldErr("Duration", "and a request count both bound the phase", "give one of them")
		case cfg.Duration < time.Millisecond || cfg.Duration > 30*24*time.Hour:
			return nil, fieldErr("Duration", fmt.Sprintf("%v is out of range", cfg.Duration), "use 1ms to 720h")
		}
		for _, r := range sp.rates {
			rf, _ := r.Float64()
			if rf*cfg.Duration.Seconds() > MaxRequests {
				return nil, fieldErr("Duration", fmt.Sprintf("%v at %g requests/s is more than %d requests", cfg.Duration, rf, MaxRequests), "use a shorter duration or a lower rate")
			}
		}
	}
	if cfg.Requests != 0 && (sp.kind == KindBurst || sp.kind == KindTrace) {
		return nil, fieldErr("Requests", "applies to closed and rate schedules", fmt.Sprintf("drop it: a %s schedule sets its own count", sp.kind))
	}
	var sess *sessionConfig
	if sess, err = checkSessions(cfg, sp.kind); err != nil {
		return nil, err
	}
	if cfg.Repeats == 0 {
		cfg.Repeats = 1
		if sp.kind == KindBurst {
			cfg.Repeats = DefaultBurstRepeats
		}
	}

	tok := cfg.Tok
	if tok == nil {
		if tok, err = tokenize.Load(cfg.Tokenizer); err != nil {
			return nil, err
		}
	}
	kit, err := newPromptKit(tok, cfg.Seed, cfg.SaltWords, prefix)
	if err != nil {
		return nil, err
	}
	if lead := kit.fixedTokens() - kit.tailTokens; prefix.kind == "sharedK" && prefix.k < lead {
		return nil, fieldErr("Prefix", fmt.Sprintf("shared:%d is shorter than the %d tokens every prompt starts with (\"Topic:\" and the salt words)", prefix.k, lead), fmt.Sprintf("use K ≥ %d, or no salt words", lead))
	}

	h := Header{
		Format: FormatName, Major: FormatMajor, Minor: FormatMinor,
		ToolVersion: version.Tool,
		Params: Params{
			InputTokens: cfg.InputTokens,
			MaxTokens:   cfg.MaxTokens,
			Prefix:      cfg.Prefix,
			Schedule:    cfg.Schedule,
			Repeats:     cfg.Repeats,
			Requests:    cfg.Requests,
			DurationNS:  int64(cfg.Duration),
			Arrival:     cfg.Arrival,
			SaltWords:   cfg.SaltWords,
			ThinkTime:   cfg.ThinkTime,
			Sessions:    cfg.Sessions,
			Turns:       cfg.Turns,

			SystemTokens: cfg.SystemTokens,
		},
		Tokenizer:       tok.Name(),
		TokenizerDigest: tok.Digest(),
		TokenizerPath:   tokenPath(cfg),
		Seed:            cfg.Seed,
		Shape:           cfg.Shape,
		Schedule:        Schedule{Kind: sp.kind, Spec: cfg.Schedule, Levels: sp.levels, Rate: sp.rateF, Arrival: cfg.Arrival, Repeats: cfg.Repeats},
	}
	if len(sp.rates) > 1 {
		h.Schedule.Rate = 0 // a rate sweep: each phase carries its own rate
	}
	h.Minor = minorFor(h)

	var plan []plannedRequest
	switch sp.kind {
	case KindTrace:
		plan, err = planTrace(&h, sp, cfg, kit)
	default:
		plan, err = planSynthetic(&h, sp, arr, cfg, sess, kit)
	}
	if err != nil {
		return nil, err
	}
	h.Minor = minorFor(h) // a log's sessions make a 1.3 file
	total := 0
	maxOut := 0
	for _, p := range plan {
		if p.turn <= 1 && p.in < kit.minTokens() {
			return nil, fieldErr("InputTokens", fmt.Sprintf("%d: so few input tokens cannot hold the count-up instruction and the %s prefix", p.in, cfg.Prefix), fmt.Sprintf("use at least %d (tokenizer %s)", kit.minTokens(), tok.Name()))
		}
		total += p.in
		maxOut = max(maxOut, p.out)
		if total > maxTotalTokens {
			return nil, fmt.Errorf("the workload would hold more than %d input tokens: use fewer requests, levels or lengths", maxTotalTokens)
		}
	}
	if len(plan) > MaxRequests {
		return nil, fmt.Errorf("the workload would hold %d requests: at most %d are supported", len(plan), MaxRequests)
	}
	h.Task = Task{Kind: "count-up", Instruction: DefaultInstruction, Reference: kit.reference(maxOut)}

	system := ""
	if cfg.SystemTokens > 0 {
		if system, err = kit.systemPrompt(cfg.SystemTokens); err != nil {
			return nil, err
		}
	}
	reqs, err := buildRequests(kit, plan, h.Phases, cfg.Shape, system)
	if err != nil {
		return nil, err
	}
	h.Requests = len(reqs)
	return &Workload{Header: h, Requests: reqs}, nil
}

func planSynthetic(h *Header, sp schedSpec, arr arrival, cfg BuildConfig, sess *sessionConfig, kit *promptKit) ([]plannedRequest, error) {
	if sess != nil {
		return planSessions(h, sp, arr, cfg, *sess, kit)
	}
	var plan []plannedRequest
	err := layPhases(h, sp, arr, cfg, cfg.Requests, func(pi int, members []member) error {
		h.Phases[pi].Requests = len(members)
		ph := h.Phases[pi]
		for _, m := range members {
			plan = append(plan, plannedRequest{phase: pi, slot: m.slot, offset: m.offset, in: ph.InputTokens, out: cfg.MaxTokens})
		}
		if len(plan) > MaxRequests {
			what := "levels"
			if sp.kind == KindRate {
				what = "rates"
			}
			return fmt.Errorf("the workload would hold more than %d requests: use fewer %s, repeats or requests", MaxRequests, what)
		}
		return nil
	})
	return plan, err
}

// member is one member of a synthetic phase, a request or a session
// (its first turn): its slot in a burst or closed loop, its offset from
// the phase start in a rate phase.
type member struct {
	slot   int
	offset int64
}

// layPhases lays out a synthetic schedule: per input length, level (or
// rate) and repeat, one phase, added to h, of members drawn on the
// schedule: a burst of C has C; a closed loop of C asked (4·C when 0); a
// rate phase asked (100 when 0), or as many as arrive before the
// duration. fill gets each phase's index and members; its error stops the
// layout.
func layPhases(h *Header, sp schedSpec, arr arrival, cfg BuildConfig, asked int, fill func(pi int, members []member) error) error {
	addPhase := func(ph Phase) int {
		ph.Index = len(h.Phases)
		h.Phases = append(h.Phases, ph)
		return ph.Index
	}
	for _, n := range cfg.InputTokens {
		switch sp.kind {
		case KindBurst, KindClosed:
			for _, c := range sp.levels {
				count := c
				if sp.kind == KindClosed {
					count = asked
					count = cmp.Or(count, 4*c)
				}
				ms := make([]member, count)
				for i := range ms {
					ms[i].slot = i % c
				}
				for r := 1; r <= cfg.Repeats; r++ {
					pi := addPhase(Phase{
						Name: fmt.Sprintf("%s-c%d-in%d-r%d", sp.kind, c, n, r), Kind: sp.kind,
						Concurrency: c, InputTokens: n, MaxTokens: cfg.MaxTokens, Repeat: r,
					})
					if err := fill(pi, ms); err != nil {
						return err
					}
				}
			}
		case KindRate:
			count := asked
			count = cmp.Or(count, 100)
			for ri := range sp.rates {
				one, count := sp.atRate(ri, count, cfg.Duration)
				for r := 1; r <= cfg.Repeats; r++ {
					pi := addPhase(Phase{
						Name: fmt.Sprintf("rate-%s-in%d-r%d", sp.rateSpecs[ri], n, r), Kind: KindRate,
						InputTokens: n, MaxTokens: cfg.MaxTokens, Repeat: r, Rate: one.rateF,
					})
					offs := beforeEnd(arr.offsets(count, one, cfg.Seed, streamArrival+uint64(pi)), cfg.Duration)
					ms := make([]member, len(offs))
					for i, off := range offs {
						ms[i].offset = off
					}
					if err := fill(pi, ms); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func planTrace(h *Header, sp schedSpec, cfg BuildConfig, kit *promptKit) ([]plannedRequest, error) {
	win, err := parseWindow(cfg.Window)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(sp.file)
	if err != nil {
		return nil, fmt.Errorf("cannot read the request log: %v", err)
	}
	defer f.Close()
	sum := sha256.New()
	log, err := parseTraceWith(io.TeeReader(f, sum), traceOptions{orphansStart: cfg.OrphanTurns == OrphansFirst})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(sp.file), err)
	}
	// Hash the rest too, should the parser have stopped early.
	io.Copy(sum, f)

	base := filepath.Base(sp.file)
	h.Params.Schedule = "trace:" + base
	h.Schedule.Spec = h.Params.Schedule
	h.Params.InputTokens = nil
	h.Params.MaxTokens = 0
	h.Params.TimeScale = cfg.TimeScale
	h.Params.Window = cfg.Window
	if cfg.OrphanTurns == OrphansFirst {
		h.Params.OrphanTurns = cfg.OrphanTurns
	}
	h.Params.Trace = base
	h.Params.TraceDigest = "sha256:" + hex.EncodeToString(sum.Sum(nil))
	h.Params.TraceFormat = log.format
	h.Params.BlockTokens = log.blockSize

	t0 := log.rows[0].t
	var rows []traceRow
	for _, r := range log.rows {
		if log.sessions {
			break // kept by session below
		}
		rel := r.t - t0
		if rel < win.start || (win.end >= 0 && rel >= win.end) {
			continue
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 && !log.sessions {
		return nil, fieldErr("Window", fmt.Sprintf("%s holds no requests of the %s log", cfg.Window, log.format), fmt.Sprintf("the log spans %.3f s", float64(log.rows[len(log.rows)-1].t-t0)/1e9))
	}
	var notes []string
	notes = append(notes, fmt.Sprintf("%s log, timestamps read as %s", log.format, log.unit))
	if log.blockSize > 0 {
		notes = append(notes, fmt.Sprintf("%d tokens per hash id", log.blockSize))
	}
	if log.failures > 0 {
		notes = append(notes, fmt.Sprintf("%d failed request(s) (0 response tokens) skipped", log.failures))
	}
	var chains *logChains
	var rowIdx []int // with sessions: each kept row's index in log.rows
	if log.sessions {
		chains = chainRows(log.rows)
		rows = nil
		for i, r := range log.rows {
			// A session is kept or dropped whole, by its first turn: a turn
			// cannot be sent without the answer before it.
			first := log.rows[chains.first[chains.session[i]]]
			rel := first.t - t0
			if rel < win.start || (win.end >= 0 && rel >= win.end) {
				continue
			}
			rows = append(rows, r)
			rowIdx = append(rowIdx, i)
		}
		if len(rows) == 0 {
			return nil, fieldErr("Window", fmt.Sprintf("%s holds no session's first turn of the %s log", cfg.Window, log.format), fmt.Sprintf("the log spans %.3f s", float64(log.rows[len(log.rows)-1].t-t0)/1e9))
		}
		notes = append(notes, chains.note(rowIdx))
		if log.orphans > 0 {
			notes = append(notes, fmt.Sprintf("%d turn(s) whose parent is not in the log made first turns (--orphan-turns first)", log.orphans))
		}
	}
	raised, lowered, zeroOut := 0, 0, 0
	minIn := kit.minTokens()
	var plan []plannedRequest
	for r := 1; r <= cfg.Repeats; r++ {
		pi := len(h.Phases)
		sessions := map[int]int{} // the log's session → its index in the phase
		for k, row := range rows {
			in := row.in
			switch {
			case in < minIn:
				in = minIn
				raised++
			case in > MaxInputTokens:
				in = MaxInputTokens
				lowered++
			}
			out := row.out
			if out < 1 {
				out = 1
				zeroOut++
			}
			out = min(out, MaxOutputTokens)
			off := float64(row.t - t0 - win.start)
			p := plannedRequest{
				phase: pi, offset: int64(math.Round(float64(off * cfg.TimeScale))),
				in: in, out: out, hash: row.hash, blockSize: log.blockSize,
			}
			if chains != nil {
				i := rowIdx[k]
				ls := chains.session[i]
				s, ok := sessions[ls]
				if !ok {
					s = len(sessions)
					sessions[ls] = s
				}
				p.session, p.turn, p.whole = s, chains.turn[i], true
				p.chat = log.rows[chains.first[ls]].chat
			}
			plan = append(plan, p)
		}
		ph := Phase{
			Index: pi, Name: fmt.Sprintf("trace-%s-r%d", log.format, r), Kind: KindTrace,
			Repeat: r, Requests: len(rows),
		}
		if chains != nil {
			ph.Sessions, ph.Context = len(sessions), ContextLog
		}
		h.Phases = append(h.Phases, ph)
	}
	if raised > 0 {
		notes = append(notes, fmt.Sprintf("%d prompt(s) raised to the %d-token minimum", raised/cfg.Repeats, minIn))
	}
	if lowered > 0 {
		notes = append(notes, fmt.Sprintf("%d prompt(s) cut to %d tokens", lowered/cfg.Repeats, MaxInputTokens))
	}
	if zeroOut > 0 {
		notes = append(notes, fmt.Sprintf("%d request(s) with 0 output tokens given max_tokens 1", zeroOut/cfg.Repeats))
	}
	note := strings.Join(notes, "; ")
	h.Params.Note = note
	for i := range h.Phases {
		h.Phases[i].Note = note
	}
	return plan, nil
}

// buildRequests makes every prompt, spread over the CPUs. Each request's
// text depends only on the seed and its index, so the result does not
// depend on which goroutine made it.
func buildRequests(kit *promptKit, plan []plannedRequest, phases []Phase, shape Shape, system string) ([]Request, error) {
	reqs := make([]Request, len(plan))
	errs := make([]error, len(plan))
	perPhase := make([]int, len(phases))
	inPhase := make([]int, len(plan))
	for i, p := range plan {
		inPhase[i] = perPhase[p.phase]
		perPhase[p.phase]++
	}
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(plan) {
					return
				}
				p := plan[i]
				r := Request{
					ID:    fmt.Sprintf("p%03d-%04d", p.phase, inPhase[i]),
					Index: i, Phase: p.phase,
					InputTokens: p.in, MaxTokens: p.out,
					Temperature: 0, IgnoreEOS: true,
					Offset: p.offset, Slot: p.slot,
				}
				if p.turn > 0 {
					r.Session = fmt.Sprintf("p%03d-s%04d", p.phase, p.session)
					if p.chat != "" {
						r.Session = fmt.Sprintf("p%03d-c%s", p.phase, p.chat)
					}
					r.Turn, r.Think = p.turn, p.think
				}
				if p.turn > 1 && !p.whole {
					// A later turn carries its new message only; the
					// replay puts the conversation so far before it.
					r.Messages = []Message{{Role: "user", Content: FollowUp}}
					reqs[i] = r
					continue
				}
				b, err := kit.build(p.in, i, p.hash, p.blockSize)
				if err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
				r.Salt = b.salt
				if shape == ShapeChat {
					r.Messages = []Message{{Role: "user", Content: b.text}}
					if system != "" {
						r.Messages = []Message{{Role: "system", Content: system}, r.Messages[0]}
					}
				} else {
					r.Prompt = b.text
				}
				reqs[i] = r
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return reqs, nil
}
