// Package sim is a simulated LLM inference server: the same HTTP APIs the
// replay engine speaks (OpenAI chat and completions, llama.cpp /completion,
// Ollama /api/generate and /api/chat), backed by a model of a serving
// engine rather than a sleep. Requests queue for a limited number of slots,
// prefill costs time per uncached prompt token (with a prefix cache),
// decode advances all running streams one token per step whose duration
// depends on the batch size, and the answer is a real count-up in the
// configured tokenizer that stops at exactly max_tokens.
//
// Profiles (Profiles, LookupProfile) are calibrated against published
// figures; docs/SIMULATOR.md derives them. Faults (context limit, no
// streaming, chunking, wrong usage, stalls, resets, errors) can be switched
// on to show what the analysis catches.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// DefaultProfile is the profile used when Config.Profile is the zero value.
const DefaultProfile = "vllm-rtx5090-bf16"

// Config configures a Server. The zero value serves DefaultProfile with
// o200k_base and no faults.
type Config struct {
	// Profile is the engine model; the zero value means DefaultProfile.
	Profile Profile
	// Slots, if positive, overrides the profile's slot count.
	Slots int
	// Tokenizer is a tokenize.Load spec; "" means o200k_base.
	Tokenizer string
	// Model is the name /v1/models lists and answers carry when the
	// request names none; "" means the profile's name.
	Model string
	// DefaultMaxTokens applies when a request sets no limit; 0 means 256.
	DefaultMaxTokens int
	// DisablePrefixCache makes every prompt token cost prefill time.
	DisablePrefixCache bool
	// SendTimes adds "sim_sent_unix_ns" (time.Now().UnixNano() taken right
	// before the write) to every streamed chunk, so the client's timestamp
	// error can be measured.
	SendTimes bool
	// Seed drives ErrorRate's choice of failing requests.
	Seed int64
	// TokenInterval, if positive, paces every stream: its first chunk is
	// written no earlier than TokenInterval after the request arrived, nor
	// before the engine made it ready, and its k-th chunk no earlier than
	// (k−1)·TokenInterval after the first's deadline (absolute deadlines,
	// so a late write does not delay the rest). A long prefill thus
	// delays a paced stream without compressing it. With the Instant
	// profile this gives streams of a known, fixed length, for holding
	// many connections open or measuring timestamp error.
	TokenInterval time.Duration
	// FirstTokenDelay, if positive, holds a stream's first chunk until
	// this long after the request arrived, as a real server's prefill of a
	// large batch would; with TokenInterval the k-th chunk is due at
	// FirstTokenDelay + k·TokenInterval (when the engine had it ready by
	// then). The selftest's aligned bursts use
	// it so that the streams begin once the whole burst is in, instead of
	// while the client is still sending it and the server still reading
	// it (which is a burst's send, not the streams' timestamps).
	FirstTokenDelay time.Duration
	// ReasoningTokens, if positive, makes the first that many tokens of
	// every answer (at most max_tokens) reasoning, streamed in the API's
	// reasoning form: chat's delta.reasoning_content, Anthropic's thinking
	// block, the Responses API's reasoning item
	// (response.reasoning_text.delta), Ollama's thinking. The count-up
	// runs on through both, and usage counts both. APIs without a
	// reasoning form send them as answer text.
	ReasoningTokens int

	// Faults.

	// MaxContext, if positive, rejects prompts longer than this many
	// tokens with HTTP 400 and an OpenAI-style error body.
	MaxContext int
	// NoStream sends the whole answer as one chunk at the end (still SSE
	// or NDJSON), like a server that buffers.
	NoStream bool
	// TokensPerChunk puts K tokens in each chunk; 0 or 1 is one per chunk.
	TokensPerChunk int
	// DropUsage omits usage, timings and eval counts.
	DropUsage bool
	// InflateUsage, if above 1, multiplies every reported output token
	// count: the server claims more tokens than it sent.
	InflateUsage int
	// StallAfter, if positive, stops sending after that many tokens and
	// keeps the connection open until the client gives up.
	StallAfter int
	// ResetAfter, if positive, closes the TCP connection abruptly (RST)
	// after that many tokens.
	ResetAfter int
	// ErrorRate is the fraction of requests answered with HTTP 500.
	ErrorRate float64
	// Overrun, if above 1, makes the server ignore max_tokens and send
	// Overrun times as many tokens (at most 131,072): a server that
	// streams on and on, for the client's overlong bound.
	Overrun int
	// QuadraticPrefill, if positive, makes prefill time grow with the
	// square of the input, as a server whose attention has no
	// memory-efficient kernel: every prompt token also costs this much per
	// earlier token of its prompt (Profile.PrefillPerPair), so an L-token
	// prompt takes QuadraticPrefill·L(L−1)/2 longer (50ns: +1.6 s at
	// 8,000 tokens, +41 s at 40,000). Needs a profile with an engine
	// model (not Instant).
	QuadraticPrefill time.Duration

	// PoseAs makes the server answer the identity routes of one engine
	// (see Identities), for --api auto; "" answers as a generic
	// OpenAI-compatible server.
	PoseAs string
}

// Server is a running simulator. Its methods are safe for concurrent use.
type Server struct {
	cfg   Config
	prof  Profile
	model string
	tok   tokenize.Tokenizer
	out   *countUp
	eng   *engine // nil for an Instant profile
	met   *metrics
	mux   *http.ServeMux
	sess  sessions

	ids atomic.Uint64

	// onChunk, set only by tests, hears every content write: the tokens
	// it carries through and how many the engine had made by then (the
	// writer's pacing, on the model's counters rather than a clock).
	onChunk func(a api, through, made int)

	rngMu sync.Mutex
	rng   *rand.Rand

	// Close waits for every handler; mu orders admissions against it.
	mu       sync.Mutex
	closed   bool
	quit     chan struct{}
	handlers sync.WaitGroup

	srv *http.Server
	ln  net.Listener
	url string
}

// New validates cfg and builds a server; its engine runs from now on, so
// call Close when done even if Start is never called.
func New(cfg Config) (*Server, error) {
	p := cfg.Profile
	if p == (Profile{}) {
		var err error
		if p, err = LookupProfile(DefaultProfile); err != nil {
			return nil, err
		}
	}
	if cfg.Slots < 0 {
		return nil, fmt.Errorf("sim: slots is %d: use 0 for the profile's default or a positive count", cfg.Slots)
	}
	if cfg.Slots > 0 {
		p.Slots = cfg.Slots
	}
	switch {
	case cfg.MaxContext < 0, cfg.Overrun < 0, cfg.TokensPerChunk < 0, cfg.TokenInterval < 0, cfg.FirstTokenDelay < 0, cfg.StallAfter < 0, cfg.ResetAfter < 0, cfg.InflateUsage < 0, cfg.DefaultMaxTokens < 0, cfg.ReasoningTokens < 0:
		return nil, errors.New("sim: negative fault or limit setting: use 0 to switch it off")
	case cfg.ErrorRate < 0 || cfg.ErrorRate > 1:
		return nil, fmt.Errorf("sim: error rate %v is outside [0, 1]: give a fraction such as 0.05", cfg.ErrorRate)
	}
	if err := validIdentity(cfg.PoseAs); err != nil {
		return nil, err
	}
	if cfg.QuadraticPrefill < 0 {
		return nil, errors.New("sim: negative quadratic prefill: use 0 to switch it off")
	}
	if cfg.QuadraticPrefill > 0 {
		if p.Instant {
			return nil, fmt.Errorf("sim: profile %q has no engine model, so no prefill to make quadratic: use another profile (e.g. %s)", p.Name, DefaultProfile)
		}
		// The fault is a duration of the engine like the profile's own,
		// so --time-scale scales it too: a faster simulator keeps the
		// same shape of prefill against input length.
		p.PrefillPerPair = time.Duration(math.Round(float64(cfg.QuadraticPrefill) * p.Scale()))
	}
	if !p.Instant && p.StepBase <= 0 && p.StepCompute <= 0 {
		return nil, fmt.Errorf("sim: profile %q has no step time: set StepBase or StepCompute, or Instant", p.Name)
	}
	spec := cfg.Tokenizer
	if spec == "" {
		spec = "o200k_base"
	}
	tok, err := tokenize.Load(spec)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s := &Server{
		cfg:   cfg,
		prof:  p,
		model: cfg.Model,
		tok:   tok,
		out:   countUpFor(tok),
		met:   newMetrics(p.Name, p.Scale()),
		rng:   rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5157)),
		quit:  make(chan struct{}),
	}
	// Most answers are short: render them before the first request.
	s.out.get(4096)
	if s.model == "" {
		s.model = p.Name
	}
	if !p.Instant {
		s.eng = newEngine(p, !cfg.DisablePrefixCache, s.met)
	}
	s.routes()
	return s, nil
}

// Profile returns the profile the server runs (after the Slots override).
func (s *Server) Profile() Profile { return s.prof }

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in
// the background until Close.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.closed || s.srv != nil {
		s.mu.Unlock()
		ln.Close()
		return errors.New("sim: Start called twice or after Close: build a new Server")
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: HeaderTimeout}
	srv := s.srv
	s.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// HeaderTimeout bounds how long the server waits for a request's header,
// counted from when it accepted the connection. It was 10 s, and replay's
// --prewarm opens connections before the requests that use them: on a busy
// machine (the race suite at load 13) a prewarmed connection's first request
// could come later than that, and the server reset it as a slow client (2 of
// 2,000 requests in TestSoak). A minute is near common proxies' keep-alive
// (nginx 75 s) and still ends a connection that never sends.
const HeaderTimeout = 60 * time.Second

// URL is the base URL after Start ("http://127.0.0.1:PORT"), "" before.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Handler serves the simulator's routes, for use in a caller's own server.
func (s *Server) Handler() http.Handler { return s.mux }

// Close ends in-flight streams (they stop where they are), stops the
// engine and the listener, and returns when every goroutine has exited.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.quit)
	srv := s.srv
	s.mu.Unlock()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
		if err != nil {
			err = srv.Close()
		}
	}
	s.handlers.Wait()
	if s.eng != nil {
		s.eng.stop()
	}
	return err
}

// Lateness is the total time engine steps ended later than planned
// (beyond a millisecond each): how far a busy machine kept the simulator
// from its model's pace. 0 for an Instant profile.
func (s *Server) Lateness() time.Duration { return s.lateness() }

func (s *Server) lateness() time.Duration {
	if s.eng == nil {
		return 0
	}
	return time.Duration(s.eng.late.Load())
}

// arrivalSpread is the time between the first and the last request's
// arrival at the engine over the server's life; 0 for an Instant profile.
func (s *Server) arrivalSpread() time.Duration {
	if s.eng == nil {
		return 0
	}
	return time.Duration(s.eng.lastArrive.Load() - s.eng.firstArrive.Load())
}

// enter registers a handler with Close; false means the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) failRandomly() bool {
	if s.cfg.ErrorRate <= 0 {
		return false
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64() < s.cfg.ErrorRate
}
