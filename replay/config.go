package replay

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/procwatch"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// Defaults that Resolve applies, and the CLI shows as its flags' defaults.
const (
	DefaultFlushInterval = trace.DefaultFlushInterval
	DefaultGrace         = 5 * time.Second
	DefaultAPI           = "openai-chat"
	// The CLI's request limits: a Config's zero Timeout and IdleTimeout
	// mean none, these are what a command-line run gets unless told.
	DefaultTimeout     = 10 * time.Minute
	DefaultIdleTimeout = 60 * time.Second
)

// Config is one replay run.
type Config struct {
	Workload *workload.Workload
	// URL is the server's base address, e.g. http://127.0.0.1:8080.
	URL   string
	API   string // an endpoint name, see endpoint.Names ("": DefaultAPI), or APIAuto
	Model string // empty: ask the server (/v1/models) for its first model
	Label string
	// APIKey is sent as a bearer token and written nowhere else.
	APIKey string
	// Trace is the output path (NAME.trace.zst): a convenience that adds
	// a TraceFile sink flushed every FlushInterval. "" writes no file
	// (then Sinks must say where records go).
	Trace string
	// Sinks take every finished record besides the trace file (see Sink).
	Sinks []Sink

	Timeout     time.Duration // whole request; 0 means none
	IdleTimeout time.Duration // between response bytes; 0 means none
	Warmup      int           // requests sent (one at a time) before the measured ones
	// Prewarm opens as many connections as the next phase needs before it
	// starts, so TCP set-up does not land in the first requests' TTFT.
	Prewarm  bool
	Insecure bool // accept any TLS certificate (self-signed test servers)

	// Salt fills every request's salt slot with words drawn from SaltSeed
	// (0: a random seed), so this run cannot hit an earlier run's prefix
	// cache. False replays the workload verbatim.
	Salt     bool
	SaltSeed int64

	// SendTokenIDs sends prompts as token ids of the workload's tokenizer
	// (openai-completions, llamacpp).
	SendTokenIDs bool
	// Tokenizer is where to load the workload's tokenizer from for
	// SendTokenIDs when its header names a tokenizer.json ("hf:NAME"),
	// which records a name, not a path. Its digest must match the
	// workload's.
	Tokenizer string
	// ContinuousUsage asks for per-chunk token counts where offered.
	ContinuousUsage bool
	// ServerCache is what replay asks of the server's prompt cache where
	// the API has a per-request switch (llama.cpp cache_prompt): "on",
	// "off", "default" (send nothing), or "" (auto: off when Salt is on,
	// since a salted run measures uncached prefill, else the server's
	// default, so cache studies reach the cache). The trace header records
	// what was sent.
	ServerCache string

	// ServerTokenize says whether to ask the server's own tokenizer to
	// count each distinct prompt (before the run) and each response's
	// text (after it ended, off the timing path), so the analysis can
	// judge the server's usage against the model's vocabulary:
	// ServerTokenizeAuto ("" too) probes POST /tokenize once and uses it
	// when it answers; ServerTokenizeOff never asks. It is asked with
	// Headers and the API key, never with ExtraBody (generation options
	// mean nothing to a tokenizer, and a strict server refuses them).
	ServerTokenize string

	// Duration, when not zero, bounds every open-loop phase (rate, trace)
	// in time: a request the schedule puts at or after Duration from its
	// phase's start is not sent (boundOpenPhases). Requests in flight at
	// the bound finish as usual. The trace header records it (option
	// "duration") and plans only the requests due within it.
	Duration time.Duration

	// Headers are sent with every request to the server (model discovery
	// included), after llmreplay's own, so an Authorization or User-Agent
	// given here replaces llmreplay's; the transport and format headers
	// (Content-Type, Accept, Accept-Encoding, Host …) are refused. The
	// trace header records them with secret values redacted.
	Headers http.Header
	// ExtraBody is a JSON object merged into every request body: keys the
	// API's body lacks are added, objects are merged, and a key llmreplay
	// sends itself (model, stream, max_tokens, the prompt …) is refused at
	// start (endpoint.MergeBody). The trace header records it with values
	// under secret-looking keys redacted.
	ExtraBody json.RawMessage

	// SessionHeader names the header that carries a conversation's
	// session id on each of its turns (workloads with sessions only):
	// "" is DefaultSessionHeader, SessionHeaderOff sends none. The trace
	// header records it (option session_header).
	SessionHeader string

	// Timestamps is the source of chunk arrival times: TimestampsKernel
	// (the kernel's receive stamp of the read that completed each event;
	// Linux, SO_TIMESTAMPING), TimestampsUser (the time right after the
	// read returned, in user space) or TimestampsAuto ("" too: kernel
	// where the system offers it, else user). Resolve sets it to the
	// source the run uses; the trace header records it, and why auto
	// fell back.
	Timestamps string

	// ChunkUserTimes keeps, with kernel stamps, each chunk's user-space
	// time beside its stamp (trace Chunk.UserT: about 3 bytes more per
	// token, since the client's delay is noise to the compressor); without
	// it a record keeps only the delays' mean and largest. The stamps are
	// the same either way.
	ChunkUserTimes bool

	// Grace is how long in-flight requests may finish after ctx is
	// cancelled (SIGINT) before they are cut off and marked cancelled;
	// 0 cuts them at once (the CLI's default is DefaultGrace).
	Grace time.Duration

	// Simulated marks a run against llmreplay's own simulator.
	Simulated  bool
	SimProfile string

	// FlushInterval bounds what a crash can lose: the trace is flushed to
	// the file this often (0: DefaultFlushInterval; a run always flushes,
	// since crash safety is a promise, not an option).
	FlushInterval time.Duration

	// Shard, when set, makes this run one shard of a run sent from several
	// client machines: Workload is then this shard's part
	// (workload.Shard) and WorkloadDigest the whole workload's digest,
	// which the trace records so trace merge can tell the shards belong
	// together. The engine fills in the host, clock and start fields.
	Shard          *trace.Shard
	WorkloadDigest string
	// StartAt, when not zero, holds the run until that wall-clock instant
	// (after model discovery), so shards on several machines start their
	// run clocks together. A start already past begins at once and the
	// trace records how late it was.
	StartAt time.Time

	// ServerMetrics is the server's Prometheus /metrics, scraped into
	// the trace during the run: ServerMetricsAuto (BASE/metrics, dropped
	// after a first scrape that fails, as most servers have none), a URL,
	// or ServerMetricsOff ("" is off). Scrapes run on their own goroutine
	// and connection; a failed one is recorded and never stops the run.
	ServerMetrics string
	// ServerMetricsInterval is the time between scrapes (0:
	// servermetrics.DefaultInterval); each times out at 4/5 of it.
	ServerMetricsInterval time.Duration
	// OnServerMetrics, if set, hears once, before the run, whether the
	// server's /metrics is scraped.
	OnServerMetrics func(ServerMetricsStatus)
	// WatchPID, when not 0, is a local process (the server) whose
	// resident memory, CPU time and threads, with its descendants', are
	// sampled every ServerMetricsInterval into the trace, and the GPUs'
	// memory when nvidia-smi is installed (Linux /proc; macOS through ps).
	WatchPID int
	// OnWatch, if set, hears once, before the run, what WatchPID samples:
	// the process ("pid N (name)") and whether GPU memory is read.
	OnWatch func(target string, gpu bool)

	// OnAPI, if set, hears which API --api auto chose and why, before
	// anything is sent.
	OnAPI func(Detection)

	// OnPhase, if set, hears each phase start (phases[i] of the run's
	// phase list, as the trace header plans it), for a progress display.
	OnPhase func(i int, phases []workload.Phase)

	// OnRecord, if set, sees every record after it was written (progress):
	// a convenience for a SinkFunc after the trace file.
	OnRecord func(*trace.Record)
}

// Resolved is a Config after its one resolve step: every default applied
// once, every check made once, the endpoint looked up, the key taken from
// the URL when the URL carries one, the tokenizer loaded for token ids. The
// engine reads only this.
type Resolved struct {
	Config
	// TokenizerSource is the tokenizer.json used for token ids ("" for a
	// built-in encoding), for the caller to say which file it was.
	TokenizerSource string
	// BeyondDuration is how many of the workload's requests Duration
	// leaves unsent (due at or after the bound).
	BeyondDuration int
	sink           sinks // the trace file, Sinks, OnRecord: in that order
	ep             endpoint.Endpoint
	base           string             // the server's base URL, credentials and API routes stripped
	tok            tokenize.Tokenizer // for SendTokenIDs
	sessTok        tokenize.Tokenizer // counts a conversation's answers
	metricsURL     string             // the /metrics to scrape, "" for none
	metricsAuto    bool               // metricsURL was guessed (ServerMetricsAuto)
	watcher        *procwatch.Watcher // WatchPID's, nil for none
	timestampsNote string             // why auto chose user-space timestamps
}

// FieldError is a Config value that cannot be used: a fielderr.Error
// whose Scope is "replay: Config".
type FieldError = fielderr.Error

func fieldErr(field, problem, fix string) error {
	return fielderr.New("replay: Config", field, problem, fix)
}

// apiRoutes are stripped from the end of a URL given with its route.
var apiRoutes = []string{"/v1/chat/completions", "/v1/completions", "/completion", "/api/generate", "/api/chat", "/v1/messages", "/v1/responses", "/generate_stream", "/v1"}

// CheckURL parses raw as Resolve takes a server's address, an http or
// https URL with a host, and returns the reason it cannot be one in the
// words Resolve uses (a Config.URL field error). Credentials in raw are
// never echoed. A command that writes the address for runs elsewhere
// (kube job) checks it with the same rule.
func CheckURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fieldErr("URL", "is empty", "give the server's base address, e.g. http://127.0.0.1:8080 (llmreplay bench runs the built-in simulator without one)")
	}
	if !strings.Contains(raw, "://") {
		// host:port without a scheme is the usual slip; url.Parse cannot
		// read it, so the message echoes it (redacted) with the fix.
		guess := RedactURL("http://" + raw)
		if gu, err := url.Parse(guess); err == nil && gu.Host != "" {
			return nil, fieldErr("URL", fmt.Sprintf("%q has no scheme", strings.TrimPrefix(guess, "http://")), "write it as "+guess+" (or https://)")
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fieldErr("URL", fmt.Sprintf("%q is not an http(s) address", RedactURL(raw)), "give one like http://127.0.0.1:8080")
	}
	return u, nil
}

// CheckAPI reports whether api can carry wl's requests, as a run checks
// before it sends anything: an API that is not known, or one with no form
// for the workload's shape (a chat workload to a raw-prompt API) is an
// API field error. "" is DefaultAPI; APIAuto chooses for the shape once
// the server answers, so it always fits.
func CheckAPI(api string, wl *workload.Workload) error {
	if api == "" {
		api = DefaultAPI
	}
	if api == APIAuto {
		return nil
	}
	ep, err := endpoint.Lookup(api)
	if err != nil {
		return fieldErr("API", fmt.Sprintf("%q is not known", api), "use one of "+strings.Join(endpoint.Names, ", ")+" or "+APIAuto)
	}
	if wl == nil || len(wl.Requests) == 0 {
		return nil
	}
	first := wl.Requests[0]
	// The model and address only need to be there: the shape is the
	// question. Every request of a workload has its shape.
	if _, err := ep.NewRequest(context.Background(), "http://127.0.0.1", &first, endpoint.Options{Model: "model"}); err != nil {
		return fieldErr("API", fmt.Sprintf("%s cannot carry this workload (%v)", api, err), "choose an API for the workload's shape (docs/APIS.md)")
	}
	return nil
}

// Resolve checks c and applies its defaults. It is the only place either
// happens.
func (c Config) Resolve() (*Resolved, error) {
	if c.Workload == nil || len(c.Workload.Requests) == 0 {
		return nil, fieldErr("Workload", "has no requests", "build one with 'llmreplay workload build'")
	}
	if c.API == "" {
		c.API = DefaultAPI
	}
	// The model id and label go into the trace header and from there onto
	// every row of every table: bounded here, where they enter.
	for _, f := range []struct{ name, v string }{{"Model", c.Model}, {"Label", c.Label}} {
		if len(f.v) > safetext.MaxName {
			return nil, fieldErr(f.name, fmt.Sprintf("is %d bytes, more than the %d a trace takes", len(f.v), safetext.MaxName), "give a shorter one")
		}
	}
	var ep endpoint.Endpoint
	if c.API != APIAuto { // auto: the engine asks the server before the run
		var err error
		if ep, err = endpoint.Lookup(c.API); err != nil {
			fix := "use one of " + strings.Join(endpoint.Names, ", ") + " or " + APIAuto
			if s := endpoint.Suggest(c.API); s != "" {
				fix = "did you mean " + s + "? " + fix
			}
			return nil, fieldErr("API", fmt.Sprintf("%q is not known", c.API), fix)
		}
		c.API = ep.Name() // an alias (vllm) is recorded as the API it names
	}
	u, err := CheckURL(c.URL)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		// Credentials in the URL go out as a header, never into files.
		if c.APIKey == "" {
			if p, ok := u.User.Password(); ok {
				c.APIKey = p
			}
		}
		u.User = nil
	}
	// Routes are stripped from the path only; the query (Azure's
	// ?api-version=…) is kept and goes after every route.
	query := u.RawQuery
	u.RawQuery, u.ForceQuery = "", false
	base := strings.TrimRight(u.String(), "/")
	for _, suffix := range apiRoutes {
		base = strings.TrimSuffix(base, suffix)
	}
	if query != "" {
		base += "?" + query
	}
	for _, f := range []struct {
		name string
		neg  bool
	}{{"Warmup", c.Warmup < 0}, {"Timeout", c.Timeout < 0}, {"IdleTimeout", c.IdleTimeout < 0}, {"Grace", c.Grace < 0}, {"FlushInterval", c.FlushInterval < 0}} {
		if f.neg {
			return nil, fieldErr(f.name, "is negative", "give 0 or more")
		}
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	switch c.ServerCache {
	case "":
		c.ServerCache = "default"
		if c.Salt {
			c.ServerCache = "off"
		}
	case "on", "off", "default":
	default:
		return nil, fieldErr("ServerCache", fmt.Sprintf("%q is not a cache setting", c.ServerCache), "use on, off or default")
	}
	switch c.ServerTokenize {
	case "":
		c.ServerTokenize = ServerTokenizeAuto
	case ServerTokenizeAuto, ServerTokenizeOff:
	default:
		return nil, fieldErr("ServerTokenize", fmt.Sprintf("%q is not a setting", c.ServerTokenize), "use auto or off")
	}
	var tsNote string
	switch c.Timestamps {
	case "", TimestampsAuto:
		c.Timestamps = TimestampsKernel
		if why := kernelStampsSupported(); why != "" {
			c.Timestamps, tsNote = TimestampsUser, why
		}
	case TimestampsKernel:
		if why := kernelStampsSupported(); why != "" {
			return nil, fieldErr("Timestamps", "kernel: "+why, "use auto or user")
		}
	case TimestampsUser:
	default:
		return nil, fieldErr("Timestamps", fmt.Sprintf("%q is not a timestamp source", c.Timestamps), "use kernel, user or auto")
	}
	if c.Salt && c.SaltSeed == 0 {
		var b [8]byte
		rand.Read(b[:])
		c.SaltSeed = int64(binary.LittleEndian.Uint64(b[:]) >> 1)
		if c.SaltSeed == 0 {
			c.SaltSeed = 1
		}
	}
	if c.Duration < 0 {
		return nil, fieldErr("Duration", "is negative", "give a positive duration, or 0 for the whole schedule")
	}
	beyond := 0
	if c.Duration > 0 {
		if c.WorkloadDigest == "" {
			// The trace names the workload file it came from, not the
			// bounded copy, as a shard's trace does.
			c.WorkloadDigest = workload.Digest(c.Workload)
		}
		if c.Workload, beyond, err = boundOpenPhases(c.Workload, c.Duration); err != nil {
			return nil, err
		}
	}
	if c.Headers, err = checkHeaders(c.Headers); err != nil {
		return nil, err
	}
	if c.ExtraBody, err = checkExtraBody(c.ExtraBody, ep, base, c.Workload, c.Model); err != nil {
		return nil, err
	}
	metricsURL, metricsAuto, err := resolveServerMetrics(&c, base)
	if err != nil {
		return nil, err
	}
	r := &Resolved{Config: c, ep: ep, base: base, BeyondDuration: beyond, metricsURL: metricsURL, metricsAuto: metricsAuto, timestampsNote: tsNote}
	if c.WatchPID != 0 {
		w, err := procwatch.New(c.WatchPID)
		if err != nil {
			return nil, fieldErr("WatchPID", err.Error(), "give the process id of the server running on this machine (pgrep -f NAME)")
		}
		r.watcher = w
	}
	if c.Trace != "" {
		r.sink = append(r.sink, &TraceFile{Path: c.Trace, FlushInterval: c.FlushInterval})
	}
	r.sink = append(r.sink, c.Sinks...)
	if c.OnRecord != nil {
		r.sink = append(r.sink, SinkFunc(c.OnRecord))
	}
	if len(r.sink) == 0 {
		return nil, fieldErr("Trace", "is empty and there are no Sinks", "say where the records go")
	}
	if c.Workload.HasSessions() {
		if err := resolveSessions(&c, r); err != nil {
			return nil, err
		}
		r.Config = c
	}
	if c.SendTokenIDs {
		if c.Workload.Header.Shape != workload.ShapeCompletion {
			return nil, fieldErr("SendTokenIDs", "needs a completion-shaped workload", "build the workload with the completion shape")
		}
		tok, source, err := workload.Tokenizer(c.Workload.Header, c.Tokenizer)
		if err != nil {
			return nil, fieldErr("Tokenizer", "cannot be recalled ("+err.Error()+")", "give the tokenizer.json path")
		}
		r.TokenizerSource = source
		if want := c.Workload.Header.TokenizerDigest; want != "" && tok.Digest() != want {
			return nil, fieldErr("Tokenizer", fmt.Sprintf("%s (%s) is not the one the workload was built with (%s, %s)", tok.Name(), tok.Digest(), c.Workload.Header.Tokenizer, want), "give that one")
		}
		r.tok = tok
	}
	return r, nil
}
