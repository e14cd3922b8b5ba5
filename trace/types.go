// Package trace is llmreplay's trace format: per-request, per-chunk
// timestamps and the raw facts of every response (text, usage, errors),
// written as the run goes so a crash loses at most the last second, and read
// back by a streaming reader that accepts every version ever written.
//
// A trace never holds only summaries: every metric, including ones invented
// after the trace was recorded, is computed from it offline.
package trace

import "encoding/json"

// FormatName is the magic at the start of every trace.
const FormatName = "llmreplay-trace"

// The version this package writes. Readers accept every version in
// ReadVersions and refuse a newer major version with a clear error.
const (
	FormatMajor = 1
	// 1.1 added the shard entry (per-record shard ids in merged traces)
	// and the header's shard, shards and shards_missing fields; a 1.0
	// reader skips the one and ignores the others.
	// 1.2 appended two fields to a record's body, written only when set:
	// clipped_bytes and notes; a 1.0 or 1.1 reader ignores them.
	// 1.3 appended two more after them, written only when set:
	// server_prompt_tokens and server_text_tokens (the server's own
	// tokenizer's counts); older readers ignore them.
	// 1.3 also added the scrape entry (the server's /metrics and a
	// watched process's memory and CPU during the run); a 1.0–1.2 reader
	// skips it as an entry kind it does not know.
	// 1.4 appended session, turn and sent_input_tokens after them (a
	// conversation's turns), written only when set, and the error class
	// not-sent (a session's turns after one that failed); older readers
	// ignore the fields and show the class as they find it.
	// 1.4 also appended, after those, a column of each chunk's user-space
	// time (user_t_ns) when chunk times are kernel stamps, the header's
	// timestamps and timestamps_note, and the clock scrape (the wall
	// clock's offset from the run clock at the start and the end).
	// 1.5 keeps, in place of that column (which a run now writes only when
	// asked), a request's mean and largest user-space delay after the
	// kernel stamps, behind a one-varint marker (−1) in the column's place
	// that a 1.4 reader takes for a column to ignore.
	// 1.6 puts every time of a request on one clock: done_ns is the
	// kernel stamp of the read that ended the response, like the chunks,
	// and the header's time_sources names each time field's source. It
	// appends, after the 1.5 fields and only when set, the chunks read
	// late (their indices and the largest delay), and gives flag bit 5
	// (the request kept user-space times in a kernel run) its meaning.
	// It adds the progress entry (what was sent by each flush, and an
	// entry written only by a clean close), and ends a zstd block, not a
	// frame, at each flush: a 1.0–1.5 reader skips the entry, ignores the
	// fields and the bit, and decodes the blocks as any zstd stream.
	FormatMinor = 6
)

// Header is written once, at the start of a trace. All times in records are
// nanoseconds on the monotonic clock since the run start; StartWall says
// when that was.
type Header struct {
	Format      string `json:"format"`
	Major       int    `json:"major"`
	Minor       int    `json:"minor"`
	ToolVersion string `json:"tool_version"`

	WorkloadDigest string `json:"workload_digest"`
	Tokenizer      string `json:"tokenizer"`
	// TokenizerPath and TokenizerDigest (1.1) are the workload's: where its
	// tokenizer.json was and its digest, so the analysis finds it again.
	TokenizerPath   string  `json:"tokenizer_path,omitempty"`
	TokenizerDigest string  `json:"tokenizer_digest,omitempty"`
	Shape           string  `json:"shape"` // "chat" or "completion"
	Phases          []Phase `json:"phases"`
	// Reference is the start of the correct answer (the count-up), copied
	// from the workload so the analysis needs nothing but the trace.
	Reference string `json:"reference,omitempty"`

	URL   string `json:"url"` // credentials stripped
	API   string `json:"api"`
	Model string `json:"model"`
	Label string `json:"label"`

	// Simulated is true when the server was llmreplay's own simulator.
	Simulated  bool   `json:"simulated,omitempty"`
	SimProfile string `json:"sim_profile,omitempty"`

	StartWall string `json:"start_wall"` // RFC 3339 with nanoseconds, UTC
	Host      Host   `json:"host"`

	// Timestamps is the source of chunk times (1.4): TimestampsKernel
	// (the kernel's receive stamp of each read; a request whose stamps
	// failed keeps user-space times and says so in its notes) or
	// TimestampsUser ("" before 1.4); TimestampsNote says why a run that
	// could have used kernel stamps did not.
	Timestamps     string `json:"timestamps,omitempty"`
	TimestampsNote string `json:"timestamps_note,omitempty"`
	// TimeSources (1.6) names the source of each time field of the
	// records, field name → TimestampsKernel or TimestampsUser:
	// scheduled_ns, sent_ns, headers_ns, done_ns, and t_ns for the chunks.
	// Older traces have none; TimeSource answers for them too.
	TimeSources map[string]string `json:"time_sources,omitempty"`

	// SaltSeed drew the per-run salt words; Salt is false for --salt off.
	Salt     bool  `json:"salt"`
	SaltSeed int64 `json:"salt_seed"`

	// Options records how the replay ran (timeouts, warm-up, token ids …)
	// as name → value, for the reader's information.
	Options map[string]string `json:"options,omitempty"`
	// RequestHeaders are the headers the run added to every request
	// (--header), secret values as "REDACTED"; ExtraBody is the JSON
	// object merged into every request body (--extra-body), values under
	// secret-looking keys as "REDACTED". Both absent when not used
	// (format 1.x readers before they existed skip them).
	RequestHeaders map[string]string `json:"request_headers,omitempty"`
	ExtraBody      json.RawMessage   `json:"extra_body,omitempty"`

	// Shard is set in the trace of one shard of a sharded run (1.1).
	Shard *Shard `json:"shard,omitempty"`
	// Shards is set in a merged trace: one entry per shard trace merged,
	// in shard order (1.1). Records then carry their shard's index.
	Shards []Shard `json:"shards,omitempty"`
	// ShardsMissing lists the shard indices a merge was allowed to do
	// without (--allow-missing) (1.1).
	ShardsMissing []int `json:"shards_missing,omitempty"`
}

// Host is the machine the client ran on.
type Host struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	GoVersion string `json:"go_version"`
	Hostname  string `json:"hostname,omitempty"`
}

// Phase mirrors the workload's phase, so grouping needs only the trace.
type Phase struct {
	Index       int     `json:"index"`
	Name        string  `json:"name"`
	Kind        string  `json:"kind"`
	Concurrency int     `json:"concurrency"`
	InputTokens int     `json:"input_tokens"`
	MaxTokens   int     `json:"max_tokens"`
	Repeat      int     `json:"repeat"`
	Rate        float64 `json:"rate,omitempty"`
	Requests    int     `json:"requests"`
}

// Record is everything that happened to one request. Times are nanoseconds
// since the run start; 0 means "did not happen" except for Scheduled, which
// a request released at the very start legitimately has as 0.
type Record struct {
	ID     string `json:"id"`
	Index  int    `json:"index"`
	Phase  int    `json:"phase"`
	Warmup bool   `json:"warmup,omitempty"`

	InputTokens int `json:"input_tokens"` // as built, from the workload
	MaxTokens   int `json:"max_tokens"`

	Scheduled int64 `json:"scheduled_ns"` // when the schedule said to send
	Sent      int64 `json:"sent_ns"`      // when the request was written
	Headers   int64 `json:"headers_ns"`   // when the response headers arrived
	Done      int64 `json:"done_ns"`      // when the response ended or failed

	Status int     `json:"status"` // HTTP status; 0 if none arrived
	Chunks []Chunk `json:"chunks"`

	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is the server's usage object as it sent it (JSON), or "".
	Usage string `json:"usage,omitempty"`
	// Timings is the server's own timing object as sent (llama.cpp
	// `timings`, Ollama's *_count and *_duration fields), or "".
	Timings string `json:"timings,omitempty"`

	Error *Error `json:"error,omitempty"`

	// Clipped is how many bytes of the response's text (and reasoning)
	// the trace does not hold (1.2): the writer keeps a record within
	// what every reader accepts (see Writer), cutting text, never times.
	// Chunks keep their times and wire byte counts; the cut text is the
	// end of the response.
	Clipped int64 `json:"clipped_bytes,omitempty"`
	// Notes are what the client saw that is odd but not a failure (1.2),
	// e.g. finish reasons sent after the first one, text after the finish:
	// one line, "; " between notes.
	Notes string `json:"notes,omitempty"`

	// ServerPromptTokens and ServerTextTokens (1.3) are the server's own
	// tokenizer's counts (its /tokenize endpoint, asked off the timing
	// path) of the prompt as sent and of the text and reasoning received:
	// what the model's vocabulary makes of them, where the workload's
	// tokenizer may be another. 0: not asked (no endpoint, --server-tokenize
	// off, no text); TokenizeUnavailable (−1): asked, and no count came back.
	ServerPromptTokens int `json:"server_prompt_tokens,omitempty"`
	ServerTextTokens   int `json:"server_text_tokens,omitempty"`

	// Session and Turn (1.4) place the request in a conversation: the
	// workload's stable session id and the turn (1, 2, …); empty and 0
	// for a single request. SentInputTokens (1.4) is the whole prompt as
	// sent, counted with the workload's tokenizer: the system prompt, every
	// earlier turn's messages and the answers received (what the server
	// wrote, recorded as sent), and this turn's message; InputTokens stays
	// the part the workload wrote for this turn. 0: not counted (a single
	// request, whose prompt is InputTokens).
	Session         string `json:"session,omitempty"`
	Turn            int    `json:"turn,omitempty"`
	SentInputTokens int    `json:"sent_input_tokens,omitempty"`

	// UserDelayMean and UserDelayMax (1.5) are how long after the kernel's
	// receive stamp the client's reads returned, the mean and the largest
	// over the request's chunks, when chunk times are kernel stamps: the
	// client's own scheduling delay, which the stamps keep out of the
	// chunk times. 0 when the request has user-space times. A trace that
	// kept each chunk's user-space time (Chunk.UserT) gets them computed
	// from it when read.
	UserDelayMean int64 `json:"user_delay_mean_ns,omitempty"`
	UserDelayMax  int64 `json:"user_delay_max_ns,omitempty"`

	// ReadLate (1.6) counts the chunks read late (Chunk.ReadLate), and
	// ReadLateMax is the largest of their delays: for a chunk that shared
	// its read with a later chunk, how much earlier than its time it may
	// have arrived (its time less the request's previous read); for a
	// read that returned after the stream's next chunk had arrived, how
	// long after its stamp it returned. 0 and 0 when none was.
	ReadLate    int   `json:"read_late,omitempty"`
	ReadLateMax int64 `json:"read_late_max_ns,omitempty"`

	// UserTimes (1.6) says this request kept user-space times although
	// the run's chunk times are kernel stamps (a read came without a
	// usable stamp; Notes says why): every time of it is then the
	// client's.
	UserTimes bool `json:"user_times,omitempty"`

	// Shard is the index of the shard that sent the request, in a merged
	// trace; nil elsewhere (1.1: stored as a shard entry before the first
	// record of each run of records from one shard).
	Shard *int `json:"shard,omitempty"`
}

// TokenizeUnavailable in Record.ServerPromptTokens or ServerTextTokens
// says the server was asked to count and did not answer with a count (an
// error, a timeout, a malformed reply).
const TokenizeUnavailable = -1

// Chunk is one streamed event (an SSE event or an NDJSON line) that carried
// anything: text, reasoning text, usage or a finish signal.
type Chunk struct {
	T         int64  `json:"t_ns"`  // arrival: taken right after the read returned
	Bytes     int    `json:"bytes"` // wire bytes of the event
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// Tokens is the server's own count of tokens in this chunk when it
	// reports one (continuous usage stats); 0 when unknown.
	Tokens int `json:"tokens,omitempty"`
	// ServerT is the simulator's send time in its test mode (ns since the
	// run start, on the same clock); 0 otherwise.
	ServerT int64 `json:"server_t_ns,omitempty"`
	// UserT is the user-space arrival time (right after the read returned)
	// when T is the kernel's receive stamp of the same read (the header's
	// Timestamps is "kernel" and the request kept its stamps), in a run
	// that kept each chunk's (replay --chunk-user-times; otherwise only
	// the record's UserDelayMean and UserDelayMax); 0 when T itself is the
	// user-space time (1.4).
	UserT int64 `json:"user_t_ns,omitempty"`
	// ReadLate (1.6) marks a chunk carrying text or reasoning that the
	// client read late: the read that delivered it also delivered a later
	// such chunk of the stream (so T, that read's stamp, is the later
	// chunk's arrival: an upper bound on its own), or returned after the
	// stream's next such chunk had arrived. For a 1.4 or 1.5 trace with
	// kernel stamps the reader marks the first kind itself, from chunks
	// that share a stamp (MarkSharedReads).
	ReadLate bool `json:"read_late,omitempty"`
}

// ErrorClass says what went wrong with a request, so analysis can count
// failures by kind.
type ErrorClass string

const (
	ErrRefused      ErrorClass = "refused"       // connection refused
	ErrReset        ErrorClass = "reset"         // connection reset or closed mid-response
	ErrTLS          ErrorClass = "tls"           // TLS handshake failed
	ErrTimeoutFirst ErrorClass = "timeout-first" // no first byte before the timeout
	ErrIdleTimeout  ErrorClass = "idle-timeout"  // too long between chunks
	ErrTimeout      ErrorClass = "timeout"       // the whole request took too long
	ErrHTTPStatus   ErrorClass = "http-status"   // a non-2xx status
	ErrMalformed    ErrorClass = "malformed"     // the stream could not be parsed
	ErrServer       ErrorClass = "server-error"  // an error object inside a 200 stream
	ErrIncomplete   ErrorClass = "incomplete"    // ended without the API's finish signal
	ErrCancelled    ErrorClass = "cancelled"     // the run was stopped (SIGINT)
	ErrOverlong     ErrorClass = "overlong"      // far past max_tokens: reading stopped
	// ErrNotSent (1.4) is a turn of a session that was never sent because
	// an earlier turn failed (the conversation cannot go on without its
	// answer); the message names that turn and its failure. Such a record
	// has no times but Scheduled: it is neither ok nor a failure.
	ErrNotSent ErrorClass = "not-sent"
	ErrOther   ErrorClass = "other"
)

// Error is why a request failed.
type Error struct {
	Class   ErrorClass `json:"class"`
	Message string     `json:"message"`
	// Body is the start of an error response body (at most 4 KiB).
	Body string `json:"body,omitempty"`
}

// Error makes a request's failure a Go error, so that an Endpoint's Read can
// return one and the engine can record it as it is (errors.As).
func (e *Error) Error() string { return string(e.Class) + ": " + e.Message }

// OK reports whether the request completed without error.
func (r *Record) OK() bool { return r.Error == nil }

// Shift moves every time of r on the run's clock by d ns (a round or a
// shard put onto another run's clock): the schedule, the send, headers
// and end where set, and each chunk's arrival, send time and user-space
// time where set. Durations (the user delays) do not move. Every time
// must move together: the writer stores a chunk's UserT as its distance
// from T, and once cost the whole column by moving T alone.
func (r *Record) Shift(d int64) {
	r.Scheduled += d
	for _, t := range []*int64{&r.Sent, &r.Headers, &r.Done} {
		if *t != 0 {
			*t += d
		}
	}
	for i := range r.Chunks {
		c := &r.Chunks[i]
		c.T += d
		if c.ServerT != 0 {
			c.ServerT += d
		}
		if c.UserT != 0 {
			c.UserT += d
		}
	}
}

// The time fields TimeSources names.
const (
	FieldScheduled = "scheduled_ns"
	FieldSent      = "sent_ns"
	FieldHeaders   = "headers_ns"
	FieldDone      = "done_ns"
	FieldChunk     = "t_ns"
)

// TimeSource is the source of a time field of the trace's records
// (FieldSent …): TimestampsKernel or TimestampsUser. A 1.6 trace says
// (TimeSources); for older ones it is what their writers did: user-space
// times everywhere, except, with header timestamps "kernel" (1.4, 1.5),
// chunk and header times, which were kernel stamps while done_ns was not
// (a 1.5 request that ended with its last chunk had done_ns equal to that
// chunk's stamp).
func (h *Header) TimeSource(field string) string {
	if h.Minor >= 6 || h.TimeSources != nil {
		if s := h.TimeSources[field]; s != "" {
			return s
		}
		return TimestampsUser
	}
	if h.Timestamps == TimestampsKernel && (field == FieldHeaders || field == FieldChunk) {
		return TimestampsKernel
	}
	return TimestampsUser
}

// Content reports whether the chunk carries text or reasoning: the
// chunks TTFT and inter-token gaps are measured on.
func (c *Chunk) Content() bool { return c.Text != "" || c.Reasoning != "" }

// MarkSharedReads marks, in a record whose chunk times are kernel
// stamps, every content chunk that shares its time with a later content
// chunk: one read delivered both, and the stamp is that of the last
// segment it copied, so the earlier chunk's time is the later one's
// arrival. It sets ReadLate on them and adds them to r.ReadLate, and
// raises r.ReadLateMax to the largest bound: the chunk's time less the
// request's previous read (the latest earlier chunk time below it, else
// the headers' time, else the send), which the chunk arrived after.
// Marks already set are kept and not counted again.
func MarkSharedReads(r *Record) {
	cs := r.Chunks
	prev := r.Sent // the latest earlier read's time
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1].T == cs[i].T {
			j++
		}
		t := cs[i].T
		lo := prev
		if r.Headers > lo && r.Headers < t {
			lo = r.Headers // the headers came in an earlier read
		}
		// cs[i:j+1] came in one read; its content chunks but the last
		// were read late.
		last := -1
		for k := j; k >= i; k-- {
			if cs[k].Content() {
				last = k
				break
			}
		}
		for k := i; k < last; k++ {
			if !cs[k].Content() || cs[k].ReadLate {
				continue
			}
			cs[k].ReadLate = true
			r.ReadLate++
			if lo < t {
				r.ReadLateMax = max(r.ReadLateMax, t-lo)
			}
		}
		if t > prev {
			prev = t
		}
		i = j + 1
	}
}

// ReadVersions are the format versions this package reads ("major.x"
// accepts every minor version of that major).
var ReadVersions = []string{"1.x"}
