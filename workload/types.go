// Package workload decides what to send and when: tokenizer-exact prompts,
// their arrival schedule, and the versioned, deterministic workload file
// that carries both from the machine that built them to every machine that
// replays them.
//
// A workload knows nothing of HTTP or of the results; data flows one way:
// workload → replay → trace → analyze.
package workload

// FormatName is the magic every workload file starts with.
const FormatName = "llmreplay-workload"

// The format version this package writes. Readers accept every version
// listed in ReadVersions.
const (
	FormatMajor = 1
	// FormatMinor is the newest minor version this package writes: 1.1
	// added tokenizer_path. A file is marked 1.1 only when it carries
	// that field, so workloads built from a built-in encoding stay
	// byte-identical to 1.0 (their digests do not change).
	// 1.2 added conversations: the params turns, think_time, sessions
	// and system_tokens, a phase's sessions, and a request's session,
	// turn and think_ns. A file is marked 1.2 only when it has sessions
	// or a system prompt; every other file is written as before.
	// 1.3 added a phase's context "log": sessions imported from a request
	// log whose every turn holds its whole prompt (see ContextLog). A file
	// is marked 1.3 only when it has such a phase.
	FormatMinor = 3
)

// ContextLog as a phase's Context (1.3) says each turn of its sessions
// carries its whole prompt as a request log recorded it (earlier turns and
// answers included, as the log's hash blocks lay them out): the replay
// sends it as it is, not after the conversation so far, still in order and
// never before the answer to the turn before it has ended.
const ContextLog = "log"

// Shape is how a request is put to the server.
type Shape string

const (
	// ShapeChat sends one user message; the server's chat template adds a
	// few tokens of its own, which the analysis reads from the usage.
	ShapeChat Shape = "chat"
	// ShapeCompletion sends a raw prompt, exact to the token.
	ShapeCompletion Shape = "completion"
)

// Schedule kinds. Phases run one after the other; within a phase the kind
// decides when each request is released.
const (
	// KindBurst releases all requests of the phase together behind a
	// barrier and waits until all have finished (the seeds' method).
	KindBurst = "burst"
	// KindClosed runs Concurrency workers; each sends its next request as
	// soon as its previous one ends.
	KindClosed = "closed"
	// KindRate sends each request at its Offset from the phase start
	// (open loop), whatever the server does.
	KindRate = "rate"
	// KindTrace is open loop like KindRate, with offsets and lengths taken
	// from a public request log.
	KindTrace = "trace"
)

// Workload is a whole workload file held in memory.
type Workload struct {
	Header   Header
	Requests []Request
}

// Header describes how the workload was generated. It holds nothing about
// the machine or the time it was built, so that the same command and seed
// give byte-identical files everywhere.
type Header struct {
	Format      string `json:"format"`
	Major       int    `json:"major"`
	Minor       int    `json:"minor"`
	ToolVersion string `json:"tool_version"`

	// Params are the generator parameters as given, for `inspect` and for
	// rebuilding the same workload later.
	Params Params `json:"params"`

	Tokenizer       string `json:"tokenizer"`
	TokenizerDigest string `json:"tokenizer_digest"`
	// TokenizerPath (1.1) is the absolute path of the tokenizer.json the
	// workload was built with, so verify, replay --send-token-ids and the
	// analysis of its traces find it again (see tokenize.Recall); empty for
	// built-in encodings.
	TokenizerPath string `json:"tokenizer_path,omitempty"`
	Seed          int64  `json:"seed"`
	Shape         Shape  `json:"shape"`

	Task     Task     `json:"task"`
	Schedule Schedule `json:"schedule"`
	Phases   []Phase  `json:"phases"`

	// Requests is the number of requests that follow the header.
	Requests int `json:"requests"`
}

// Params are the generator's inputs, in a fixed order.
type Params struct {
	InputTokens []int   `json:"input_tokens"`
	MaxTokens   int     `json:"max_tokens"`
	Prefix      string  `json:"prefix"` // "unique", "shared" or "shared:K"
	Schedule    string  `json:"schedule"`
	Repeats     int     `json:"repeats"`
	Requests    int     `json:"requests,omitempty"`    // per level for closed/rate
	DurationNS  int64   `json:"duration_ns,omitempty"` // rate phases bounded in time (--duration)
	Arrival     string  `json:"arrival,omitempty"`
	TimeScale   float64 `json:"time_scale,omitempty"`
	Window      string  `json:"window,omitempty"`
	SaltWords   int     `json:"salt_words"`

	// Trace is the base name of the request log of a trace:FILE schedule
	// (never its full path, which would tie the file to one machine), with
	// the log's digest and what the importer made of it.
	Trace       string `json:"trace,omitempty"`
	TraceDigest string `json:"trace_digest,omitempty"`
	TraceFormat string `json:"trace_format,omitempty"`
	// BlockTokens is the tokens per hash id of a Mooncake-style log: equal
	// ids get equal blocks of filler, so the log's shared prefixes survive.
	BlockTokens int `json:"block_tokens,omitempty"`
	// OrphanTurns (1.3) is "first" when a log's turns whose parent is not
	// in it were made first turns of their sessions (--orphan-turns).
	OrphanTurns string `json:"orphan_turns,omitempty"`
	// Note says what the generator had to adjust (skipped failures, raised
	// lengths), so a reader of inspect's output is not surprised.
	Note string `json:"note,omitempty"`

	// Turns (1.2) is --turns as given ("4" or "2..8"): the workload is
	// made of sessions (conversations) of that many turns; empty for
	// single requests. ThinkTime is --think-time as given, Sessions the
	// sessions per closed or rate phase (0: the default), SystemTokens
	// the length of the system prompt every session shares (0: none).
	Turns        string `json:"turns,omitempty"`
	ThinkTime    string `json:"think_time,omitempty"`
	Sessions     int    `json:"sessions,omitempty"`
	SystemTokens int    `json:"system_tokens,omitempty"`
}

// Task is what every request asks the model to do, with the reference
// answer so the analysis can check that the model really did it.
type Task struct {
	Kind        string `json:"kind"` // "count-up"
	Instruction string `json:"instruction"`
	// Reference is the beginning of the correct answer ("1, 2, 3, …"),
	// at least as many tokens long as the largest MaxTokens.
	Reference string `json:"reference"`
}

// Schedule is the arrival schedule as specified, e.g. "burst:1,4,8,16,32".
type Schedule struct {
	Kind    string  `json:"kind"`
	Spec    string  `json:"spec"`
	Levels  []int   `json:"levels,omitempty"` // concurrency levels (burst, closed)
	Rate    float64 `json:"rate,omitempty"`   // requests per second (rate)
	Arrival string  `json:"arrival,omitempty"`
	Repeats int     `json:"repeats"`
}

// Phase is one step of the schedule: one concurrency level at one input
// length, one repeat. Phases run in order, each after the previous ended.
type Phase struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"` // e.g. "burst-c8-in800-r2"
	Kind        string  `json:"kind"`
	Concurrency int     `json:"concurrency"`  // burst size or closed-loop workers; 0 for open loop
	InputTokens int     `json:"input_tokens"` // nominal; 0 when lengths vary (trace)
	MaxTokens   int     `json:"max_tokens"`
	Repeat      int     `json:"repeat"`
	Rate        float64 `json:"rate,omitempty"`
	Requests    int     `json:"requests"`
	// Sessions (1.2) is the number of conversations in the phase; the
	// schedule then starts sessions, not requests (a burst of C starts C
	// sessions together, a closed loop's worker runs one session after
	// another, a rate phase starts sessions at their offsets), and each
	// session sends its turns one after another. 0: single requests.
	Sessions int `json:"sessions,omitempty"`
	// Context (1.3) is how a later turn of the phase's sessions is sent:
	// "" (the default) after the conversation so far, the answers actually
	// received included; ContextLog as it is, its prompt being the whole
	// conversation as a request log recorded it. A later turn of a
	// ContextLog phase with an Offset is sent at that offset from the
	// phase start, or as soon as the answer before it has ended if that
	// is later, then after its Think.
	Context string `json:"context,omitempty"`
	// Note says what the importer adjusted in this phase, if anything.
	Note string `json:"note,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one request to send.
type Request struct {
	// ID is stable across rebuilds with the same parameters, e.g. "p003-0005".
	ID    string `json:"id"`
	Index int    `json:"index"` // position in the file
	Phase int    `json:"phase"`

	// Exactly one of Prompt (completion) and Messages (chat) is set.
	Prompt   string    `json:"prompt,omitempty"`
	Messages []Message `json:"messages,omitempty"`

	// InputTokens is the exact token count of Prompt, or of the last
	// message's content, under the workload's tokenizer.
	InputTokens int     `json:"input_tokens"`
	MaxTokens   int     `json:"max_tokens"`
	Temperature float64 `json:"temperature"`
	// IgnoreEOS asks the server, where its API allows, to keep generating
	// past end-of-sequence so that exactly MaxTokens come out.
	IgnoreEOS bool `json:"ignore_eos"`

	// Offset is the arrival time in nanoseconds from the phase start, for
	// open-loop phases (rate, trace). Zero for burst and closed phases.
	Offset int64 `json:"offset_ns"`
	// Slot is the worker (closed loop) or barrier member (burst) index.
	Slot int `json:"slot"`

	// Salt is the byte range of the salt words inside Prompt (or the last
	// message's content): the replay replaces them with words drawn from a
	// per-run seed so a second run cannot hit the first run's prefix cache,
	// keeping the token count exact. Empty when the workload has no salt.
	Salt Span `json:"salt"`

	// Session (1.2) is the stable id of the conversation this request is
	// a turn of ("p000-s0003"), unique in the workload; empty for a
	// single request. Turn counts from 1. A turn after the first holds
	// only its new user message: the replay sends the messages of the
	// turn before, the assistant's answer it actually received, then
	// this message. Think is the pause in nanoseconds between the end of
	// the previous turn's response and this turn's send (0 for turn 1,
	// which is released by the phase's schedule).
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	Think   int64  `json:"think_ns,omitempty"`
}

// Span is a half-open byte range [Start, End).
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// Words is the number of one-token words in the range.
	Words int `json:"words"`
}

// ReadVersions are the format versions this package reads ("major.x"
// accepts every minor version of that major).
var ReadVersions = []string{"1.x"}
