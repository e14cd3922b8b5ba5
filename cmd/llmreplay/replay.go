package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/llmreplay/llmreplay/internal/outfile"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/replay/progress"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// replayFlags are shared by `replay` and `bench`.
type replayFlags struct {
	url, api, model, label string
	apiKeyEnv              string
	timeout, idleTimeout   time.Duration
	grace                  time.Duration
	warmup                 int
	prewarm                bool
	insecure               bool
	salt                   string
	saltSeed               int64
	sendTokenIDs           bool
	tokenizer              string
	continuousUsage        bool
	serverCache            string
	serverTokenize         string
	failOnError            bool
	quiet                  bool
	headers                []string
	extraBody              string
	serverMetrics          string
	metricsInterval        time.Duration
	watchPID               int
	sessionHeader          string
	timestamps             string
	chunkUserTimes         bool

	// flags is the command's flag set, to tell a --api-key-env the user
	// typed from its default.
	flags *pflag.FlagSet
}

func (f *replayFlags) register(cmd *cobra.Command, defaultAPI string) {
	fs := cmd.Flags()
	f.flags = fs
	fs.StringVar(&f.api, "api", defaultAPI, "API shape: "+strings.Join(endpoint.Names, ", ")+", auto (ask the server which it speaks), or a server's name for its API such as vllm (docs/APIS.md)")
	fs.StringVar(&f.model, "model", "", "model name to request (default: the server's first model from /v1/models)")
	fs.StringVar(&f.label, "label", "", "label for this run in tables (default: the model name)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a bearer token, written nowhere)")
	fs.DurationVar(&f.timeout, "timeout", replay.DefaultTimeout, "give up on a request after this long (0: never)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", replay.DefaultIdleTimeout, "give up on a request when no byte arrives for this long (0: never)")
	fs.DurationVar(&f.grace, "grace", replay.DefaultGrace, "after Ctrl-C, how long in-flight requests may finish before they are cut (0: at once)")
	fs.IntVar(&f.warmup, "warmup", 0, "requests sent one at a time before the measured ones (recorded as warm-up)")
	fs.BoolVar(&f.prewarm, "prewarm", true, "open the connections a phase needs before it starts, so TCP set-up is not in TTFT")
	fs.BoolVar(&f.insecure, "insecure", false, "accept self-signed TLS certificates")
	fs.StringVar(&f.salt, "salt", "on", "on: fill each prompt's salt slot from a per-run seed so an earlier run's prefix cache cannot help; off: send prompts verbatim (cache studies)")
	fs.Int64Var(&f.saltSeed, "salt-seed", 0, "seed for the salt words (default: random, recorded in the trace)")
	fs.BoolVar(&f.sendTokenIDs, "send-token-ids", false, "send prompts as token ids (openai-completions, llamacpp; the workload's tokenizer must be the model's)")
	fs.BoolVar(&f.continuousUsage, "continuous-usage", false, "ask for per-chunk token counts (vLLM's continuous_usage_stats)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress display (the summary and errors still print)")
	fs.BoolVar(&f.failOnError, "fail-on-error", false, "exit with status 1 when any request failed")
	fs.StringArrayVar(&f.headers, "header", nil, `HTTP header sent with every request, as "NAME: VALUE" (repeatable; e.g. a routing header, or Authorization instead of --api-key-env); recorded in the trace with secret values redacted`)
	fs.StringVar(&f.extraBody, "extra-body", "", `JSON object merged into every request body, or @FILE holding one (e.g. '{"chat_template_kwargs":{"enable_thinking":false}}', '{"top_k":20}'); may add fields and extend objects, never replace a field llmreplay sends itself`)
	fs.StringVar(&f.serverMetrics, "server-metrics", replay.ServerMetricsAuto, "scrape the server's Prometheus /metrics into the trace during the run (queue, running requests, KV cache, preemptions): auto (BASE/metrics, skipped when absent), off, or the endpoint's URL")
	fs.DurationVar(&f.metricsInterval, "server-metrics-interval", servermetrics.DefaultInterval, "time between /metrics scrapes and --watch-pid samples (each times out at 4/5 of it)")
	fs.IntVar(&f.watchPID, "watch-pid", 0, "process id of the server on this machine: sample its memory (RSS), CPU time and threads, with its child processes', into the trace, and GPU memory when nvidia-smi is installed (Linux /proc; macOS through ps, without threads)")
	fs.StringVar(&f.serverTokenize, "server-tokenize", replay.ServerTokenizeAuto, "ask the server's own tokenizer (POST /tokenize of llama.cpp, vLLM, SGLang, TGI) to count each distinct prompt before the run and each response's text after it, off the timing path, so usage is judged in the model's vocabulary: auto (use it when the server answers) or off")
	fs.StringVar(&f.sessionHeader, "session-header", replay.DefaultSessionHeader, "workloads with sessions (--turns): the HTTP header that carries each conversation's stable id on all its turns, for routers with session affinity (llm-d, sticky gateways); off: none")
	fs.StringVar(&f.timestamps, "timestamps", replay.TimestampsAuto, "source of chunk arrival times: kernel (the kernel's receive stamp of each read, Linux SO_TIMESTAMPING: no client scheduling delay in it), user (the time the read returned to llmreplay), auto (kernel where the system offers it); the trace header records the source")
	fs.BoolVar(&f.chunkUserTimes, "chunk-user-times", false, "with kernel stamps, keep each chunk's user-space time beside its stamp, to see the client's delay event by event (about 3 bytes more per token); without it each request keeps the mean and largest delay")
	fs.StringVar(&f.serverCache, "server-cache", "", "the server's prompt cache where the API has a per-request switch (llama.cpp cache_prompt): on, off, default (send nothing); default: off with --salt on, else the server's default")
}

// config turns the flags into a replay.Config. It checks only what is the
// command line's own (--salt's words); everything else is checked once, by
// replay.Config.Resolve, whose errors flagError names by their flags.
func (f *replayFlags) config(wl *workload.Workload, out string) (replay.Config, error) {
	var cfg replay.Config
	switch f.salt {
	case "on", "off":
	default:
		return cfg, usagef("--salt %q: use on or off", f.salt)
	}
	headers, err := parseHeaders(f.headers)
	if err != nil {
		return cfg, err
	}
	extra, err := readExtraBody(f.extraBody)
	if err != nil {
		return cfg, err
	}
	key, err := f.apiKey()
	if err != nil {
		return cfg, err
	}
	cfg = replay.Config{
		Headers:         headers,
		ExtraBody:       extra,
		Workload:        wl,
		URL:             f.url,
		API:             f.api,
		Model:           f.model,
		Label:           f.label,
		APIKey:          key,
		Trace:           out,
		Timeout:         f.timeout,
		IdleTimeout:     f.idleTimeout,
		Grace:           f.grace,
		Warmup:          f.warmup,
		Prewarm:         f.prewarm,
		Insecure:        f.insecure,
		Salt:            f.salt == "on",
		SaltSeed:        f.saltSeed,
		SendTokenIDs:    f.sendTokenIDs,
		Tokenizer:       f.tokenizer,
		ContinuousUsage: f.continuousUsage,
		ServerCache:     f.serverCache,
		ServerTokenize:  f.serverTokenize,

		ServerMetrics:         f.serverMetrics,
		ServerMetricsInterval: f.metricsInterval,
		WatchPID:              f.watchPID,
		SessionHeader:         f.sessionHeader,
		Timestamps:            f.timestamps,
		ChunkUserTimes:        f.chunkUserTimes,
	}
	return cfg, nil
}

// apiKey reads the key from the variable --api-key-env names. The default
// variable (OPENAI_API_KEY) may be unset: local servers take no key. A
// variable the user named must hold one: an unset or empty one would
// otherwise send every request without a key, and the run would measure
// a server that refuses them, or a different, unauthenticated route. The
// error names the variable, never its value, and does not repeat a "name"
// that looks like a key: --api-key-env "$OPENAI_API_KEY" passes the key.
func (f *replayFlags) apiKey() (string, error) {
	key := os.Getenv(f.apiKeyEnv)
	if f.flags == nil || !f.flags.Changed("api-key-env") || strings.TrimSpace(key) != "" {
		return key, nil
	}
	name := f.apiKeyEnv
	switch {
	case name == "":
		return "", usagef("--api-key-env needs the name of the environment variable holding the key, e.g. --api-key-env OPENAI_API_KEY; to send no key, drop the flag")
	case !envVarName(name):
		return "", usagef("--api-key-env takes the name of an environment variable, and what was given is not one (not repeated here: it may be the key itself); write --api-key-env OPENAI_API_KEY, not --api-key-env \"$OPENAI_API_KEY\"")
	}
	return "", usagef("--api-key-env %s: the environment variable %s is not set or is empty, so no API key would be sent; export %s=YOUR_KEY first, or drop --api-key-env (the default, OPENAI_API_KEY, is used when set)", name, name, name)
}

// envVarName reports whether s is shaped like an environment variable's
// name (letters, digits, _; not starting with a digit) and not like a key.
// Past 24 characters a mix of lower case and digits (Hugging Face's hf_…,
// hex keys), six digits or more (an upper-case hex or base32 key), or no
// underscore at all is a token more likely than a name, so it is not
// echoed: names that long are words joined by underscores
// (AZURE_OPENAI_API_KEY_2025).
func envVarName(s string) bool {
	lower, digits, under := false, 0, false
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9' && i > 0:
			digits++
		case r == '_':
			under = true
		case r >= 'A' && r <= 'Z':
		default:
			return false
		}
	}
	if len(s) > 24 && (lower && digits > 0 || digits >= 6 || !under) {
		return false
	}
	return len(s) <= 64
}

// parseHeaders reads --header values, "NAME: VALUE" or "NAME:VALUE". The
// value is never echoed in an error: it may be a key.
func parseHeaders(vals []string) (http.Header, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, v := range vals {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, usagef(`--header needs NAME: VALUE (one was given without a name before ":"), e.g. --header "X-Priority: high"`)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// readExtraBody reads --extra-body: the JSON itself, or @FILE. Whether it
// is a usable object is replay.Config.Resolve's to check.
func readExtraBody(v string) (json.RawMessage, error) {
	if path, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--extra-body @%s: %v", path, fileProblem(err))
		}
		return b, nil
	}
	if v == "" {
		return nil, nil
	}
	return json.RawMessage(v), nil
}

// fileProblem is a file error without its repeated path.
func fileProblem(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	var sf shardFlags
	var out string
	var force bool
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "replay WORKLOAD --url URL [flags]",
		Short: "Send a workload to a server on its schedule and record every streamed chunk",
		Long: `Replay sends every request of a workload file to a server exactly as the
workload's schedule says, and writes a trace with each streamed chunk's
arrival time, the text, the server's usage and every error.

In open-loop phases (rate schedules and log replays) each request is sent at
its time to within a thread wake-up: the dispatcher sleeps until shortly
before the send and spins the rest. The spin follows the machine's recent
wake-ups, is at most 1 ms per request and never more than half the time
between two sends, so keeping time costs up to half a core at high rates
(10–16% of one at 500 requests/s on a busy 2-core machine;
docs/PERFORMANCE.md).

Failed requests are data: they are recorded with an error class and the run
goes on. The exit status is 0 when the run completed and at least one
request succeeded (see --fail-on-error to fail on any failed request), 1 when
no request succeeded or it could not run, 2 for bad input, 130 when stopped
with Ctrl-C (the trace is closed cleanly).`,
		Example: `  llmreplay workload build -o sweep.workload.zst
  llmreplay replay sweep.workload.zst --url http://127.0.0.1:8080 --label "llama.cpp Q4_K_M" -o q4.trace.zst`,
		Args: oneFile("replay", "a workload file: llmreplay replay NAME.workload.zst --url URL (make one with 'llmreplay workload build -o NAME.workload.zst')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			wl, err := workload.Open(args[0])
			if err != nil {
				return usageError(err)
			}
			cfg, err := f.config(wl, out)
			if err != nil {
				return err
			}
			cfg.Duration = duration
			if err := sf.apply(&cfg, wl, time.Now()); err != nil {
				return err
			}
			if w := clockWarning(&cfg); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			defaultOut := cfg.Trace == ""
			if defaultOut {
				cfg.Trace = trace.DefaultPath(f.label, f.model, time.Now(), shardSuffix(cfg.Shard))
			}
			// Bad settings are reported before anything is created.
			res, err := cfg.Resolve()
			if err != nil {
				return flagError(err)
			}
			if res.BeyondDuration > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "duration: %v bounds each rate or trace phase: %d of %d requests are due within it, %d later ones are not sent\n",
					duration, len(res.Workload.Requests), len(cfg.Workload.Requests), res.BeyondDuration)
			}
			if res.TokenizerSource != "" && f.tokenizer == "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "tokenizer: %s (recorded in the workload)\n", res.TokenizerSource)
			}
			if defaultOut {
				if p := outfile.FileInTheWay(filepath.Dir(cfg.Trace)); p != "" {
					return usagef("replay writes its trace to %s when no -o is given, but %s is a file, not a folder; give -o NAME.trace.zst, or move the file away", cfg.Trace, p)
				}
				if err := os.MkdirAll(filepath.Dir(cfg.Trace), 0o755); err != nil {
					return err
				}
			}
			if err := outfile.Check(cfg.Trace, force, args[0], f.tokenizer); err != nil {
				return usageError(err)
			}
			if force {
				if err := outfile.Replace(cfg.Trace); err != nil {
					return err
				}
			}
			return runReplay(cmd, cfg, &f, sf.startIn)
		},
	}
	f.register(cmd, replay.DefaultAPI)
	sf.register(cmd)
	cmd.Flags().StringVar(&f.url, "url", "", "server base address, e.g. http://127.0.0.1:8080 (required)")
	cmd.Flags().StringVar(&f.tokenizer, "tokenizer", "", "with --send-token-ids: the path of the workload's tokenizer.json (not needed for o200k_base/cl100k_base)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write (default results/LABEL-TIME.trace.zst)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the output file if it exists (never an input)")
	cmd.Flags().DurationVar(&duration, "duration", 0, "bound each rate or trace phase in time: requests the schedule puts later than this after the phase's start are not sent (recorded in the trace; 0: the whole schedule)")
	return cmd
}

// flagOf names the flag that sets each field of the libraries' configs
// that replay, bench and workload build fill (replay.Config,
// workload.BuildConfig, bench.Config): their errors name the field, the
// command line names the flag. No field name means two things.
var flagOf = map[string]string{
	// replay.Config
	"Workload": "the workload file", "API": "--api", "URL": "--url", "Warmup": "--warmup", "Timeout": "--timeout",
	"IdleTimeout": "--idle-timeout", "ServerTokenize": "--server-tokenize", "Grace": "--grace", "Tokenizer": "--tokenizer", "SendTokenIDs": "--send-token-ids",
	"Model": "--model", "ServerCache": "--server-cache", "SessionHeader": "--session-header", "Timestamps": "--timestamps", "Headers": "--header", "ExtraBody": "--extra-body",
	"ServerMetrics": "--server-metrics", "ServerMetricsInterval": "--server-metrics-interval", "WatchPID": "--watch-pid",
	// workload.BuildConfig
	"Shape": "--shape", "InputTokens": "--input-tokens", "MaxTokens": "--max-tokens", "SaltWords": "--salt-words",
	"Repeats": "--repeats", "Requests": "--requests", "Duration": "--duration", "TimeScale": "--time-scale", "Arrival": "--arrival",
	"Window": "--window", "Prefix": "--prefix", "Schedule": "--schedule",
	"Turns": "--turns", "ThinkTime": "--think-time", "Sessions": "--sessions", "SystemTokens": "--system-tokens",
	"OrphanTurns": "--orphan-turns",
	// bench.Config, sim, selftest
	"Concurrency": "--concurrency", "Profile": "--profile", "Dir": "--dir",
	// analyze.Options, trace.MergeOptions
	"SLO": "--slo", "Definitions": "--definitions", "AllowMissing": "--allow-missing", "AllowClock": "--allow-clock",
}

// flagError turns a library's field error into the command line's words
// (exit status 2): the field becomes the flag that set it.
func flagError(err error) error {
	if fe := fielderr.As(err); fe != nil && fe.Field == "Metric" {
		return usagef("metric %s: run 'llmreplay analyze --list-metrics' for the names", fe.Problem)
	}
	if out, ok := fielderr.Rename(err, flagOf); ok {
		return usageError(out)
	}
	if fe := fielderr.As(err); fe != nil {
		return usageError(err) // a field without a flag: still bad input
	}
	return err
}

// announceAPI prints what --api auto chose, before the run starts.
func announceAPI(w io.Writer) func(replay.Detection) {
	return func(d replay.Detection) { fmt.Fprintf(w, "api: %s, chosen by --api auto: %s\n", d.API, d.Why) }
}

// announceMetrics prints once whether the server's /metrics is scraped.
func announceMetrics(w io.Writer) func(replay.ServerMetricsStatus) {
	return func(s replay.ServerMetricsStatus) { fmt.Fprintln(w, safetext.Show(s.String())) }
}

// announceWatch prints once what --watch-pid samples.
func announceWatch(w io.Writer, every time.Duration) func(string, bool) {
	if every == 0 {
		every = servermetrics.DefaultInterval
	}
	return func(target string, gpu bool) {
		gpuText := "no GPU memory (nvidia-smi not found)"
		if gpu {
			gpuText = "GPU memory from nvidia-smi"
		}
		fmt.Fprintln(w, safetext.Show(fmt.Sprintf("watching %s: memory, CPU time and threads every %v into the trace; %s", target, every, gpuText)))
	}
}

// runReplay runs one replay and prints its summary line. startIn is
// --start-in when it set cfg.StartAt, for the late-start warning's words.
func runReplay(cmd *cobra.Command, cfg replay.Config, f *replayFlags, startIn time.Duration) error {
	errw := cmd.ErrOrStderr()
	failOnError := f.failOnError
	cfg.OnAPI = announceAPI(errw)
	cfg.OnServerMetrics = announceMetrics(errw)
	cfg.OnWatch = announceWatch(errw, cfg.ServerMetricsInterval)
	notes := &runNotes{w: errw, startAt: cfg.StartAt, startIn: startIn}
	cfg.Sinks = append(cfg.Sinks, notes)
	disp := f.progress(cmd, &cfg)
	sum, err := replay.Run(cmd.Context(), cfg)
	disp.Close()
	if err != nil {
		if sum == nil {
			return flagError(err)
		}
		fmt.Fprintln(errw, sum)
		notes.scrapeWarning()
		return err
	}
	fmt.Fprintf(errw, "%s\nserver tokenizer: %s\ntrace: %s\n", sum, safetext.Show(sum.TokenizeLine()), sum.Trace)
	notes.scrapeWarning()
	if sum.Stopped {
		return &exitError{code: 130, err: fmt.Errorf("stopped: the trace %s holds every request that finished", sum.Trace)}
	}
	if err := noneSucceeded(sum); err != nil {
		return err
	}
	if failOnError && sum.Failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d requests failed (--fail-on-error)", sum.Failed)}
	}
	return nil
}

// lateStart is how late past --start-at a run may start unremarked: the
// wake-up at the start time itself can be a few milliseconds late on a
// busy machine. trace merge calls a shard late from the same second.
const lateStart = time.Second

// runNotes is a sink that watches a run for what the user must hear but
// the summary line does not say: a --start-at that had passed when the run
// started (said at the start), and failed /metrics scrapes (said at the
// end). A scrape failure is otherwise only in the trace: an endpoint given
// by URL that never answers would leave the run without its server-side
// view, silently.
type runNotes struct {
	w       io.Writer
	startAt time.Time     // --start-at or now + --start-in; zero: none
	startIn time.Duration // --start-in, when it set startAt

	mu              sync.Mutex // Scrape runs on the scraping goroutine
	scrapes, failed int
	target, lastErr string
}

// Start says when the run starts later than --start-at (or --start-in,
// whose time passes when finding the model takes longer). The header's
// start is the engine's own, taken after the wait (and after model
// discovery), so a start time that passed during discovery counts too.
func (n *runNotes) Start(h trace.Header) error {
	if n.startAt.IsZero() {
		return nil
	}
	start, err := time.Parse(time.RFC3339Nano, h.StartWall)
	if err != nil {
		return nil // no start to compare: the header says what it says
	}
	if late := start.Sub(n.startAt); late > lateStart {
		round := 10 * time.Millisecond
		if late > time.Minute {
			round = time.Second
		}
		// Named as the user gave it.
		at := n.startAt.UTC().Format("2006-01-02T15:04:05.999Z07:00")
		what := "--start-at " + at
		if n.startIn > 0 {
			what = fmt.Sprintf("the start time %s (--start-in %v)", at, n.startIn)
		}
		fmt.Fprintf(n.w, "warning: %s passed %v ago: this run starts now, that much behind any shard that started on time (its trace records how late)\n",
			what, late.Round(round))
	}
	return nil
}

func (n *runNotes) Record(*trace.Record) error { return nil }
func (n *runNotes) Close() error               { return nil }

// Scrape counts the /metrics scrapes and keeps the last failure's error.
func (n *runNotes) Scrape(s *trace.Scrape) error {
	if s.Source != trace.SourceMetrics {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.scrapes++
	if s.Error != "" {
		n.failed++
		n.target, n.lastErr = s.Target, s.Error
	}
	return nil
}

// scrapeWarning prints one line when scrapes failed. The run does not
// fail: its requests were measured all the same.
func (n *runNotes) scrapeWarning() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failed == 0 {
		return
	}
	var msg string
	if n.failed == n.scrapes {
		msg = fmt.Sprintf("warning: server metrics: all %d scrapes of %s failed (last: %s): the trace has no server-side view of the run (queue, running requests, KV cache); check --server-metrics",
			n.failed, n.target, n.lastErr)
	} else {
		msg = fmt.Sprintf("warning: server metrics: %d of %d scrapes of %s failed (last: %s): the trace's server-side view of the run has gaps",
			n.failed, n.scrapes, n.target, n.lastErr)
	}
	// The error and target come from the network: escaped, one line.
	fmt.Fprintln(n.w, safetext.Show(msg))
}

var _ replay.ScrapeSink = (*runNotes)(nil)

// noneSucceeded is exit status 1 when requests were sent and not one
// succeeded: such a run measured nothing, whatever --fail-on-error says.
func noneSucceeded(sum *replay.Summary) error {
	if sum.Sent == 0 || sum.OK > 0 {
		return nil
	}
	main, n := "", 0
	for c, k := range sum.ByClass {
		if k > n || (k == n && string(c) < main) {
			main, n = string(c), k
		}
	}
	return &exitError{code: 1, err: fmt.Errorf("none of the %d requests succeeded (%d failed with %s): the trace %s holds their errors; `llmreplay trace cat` shows them", sum.Sent, n, main, sum.Trace)}
}

// progress starts the progress display on stderr for a run of cfg and
// hooks it to the run; nil with -q. The caller closes it when the run
// returns. It is a live bar on a terminal and plain lines elsewhere.
func (f *replayFlags) progress(cmd *cobra.Command, cfg *replay.Config) *progress.Display {
	if f.quiet {
		return nil
	}
	w := cmd.ErrOrStderr()
	d := progress.New(cmd.Context(), progress.Options{W: w, Terminal: isTerminal(w), Grace: cfg.Grace})
	cfg.OnPhase = d.Phase
	cfg.OnRecord = d.Record
	return d
}

// isTerminal reports whether w is a terminal (not a pipe, file or buffer)
// with a known width: a pseudo-terminal without a size (some CI runners)
// would make the bar draw nothing, so it gets the plain lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0
}
