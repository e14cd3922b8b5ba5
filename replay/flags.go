package replay

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/workload"
)

// FlagOf names the flag that sets each Config and Settings field: those
// Flags binds, and those every sending command binds itself (--url,
// --tokenizer, --duration, the workload file, -o for the trace), for a
// command line to say the errors, which name the fields, in its words.
var FlagOf = map[string]string{
	"Workload": "the workload file", "Trace": "-o", "URL": "--url", "Tokenizer": "--tokenizer", "Duration": "--duration",
	"API": "--api", "Model": "--model", "Label": "--label", "APIKeyEnv": "--api-key-env", "Timeout": "--timeout",
	"IdleTimeout": "--idle-timeout", "Grace": "--grace", "Warmup": "--warmup", "Prewarm": "--prewarm", "NormalPriority": "--normal-priority",
	"Insecure": "--insecure", "Salt": "--salt", "SaltSeed": "--salt-seed", "SendTokenIDs": "--send-token-ids", "ContinuousUsage": "--continuous-usage",
	"Headers": "--header", "ExtraBody": "--extra-body", "ServerMetrics": "--server-metrics", "ServerMetricsInterval": "--server-metrics-interval",
	"WatchPID": "--watch-pid", "ServerTokenize": "--server-tokenize", "SessionHeader": "--session-header", "Timestamps": "--timestamps",
	"ChunkUserTimes": "--chunk-user-times", "ServerCache": "--server-cache",
	"Shard": "--shard", "Shards": "--shards", "StartAt": "--start-at", "StartIn": "--start-in",
}

// Flags binds the endpoint settings of every command that sends requests
// (replay, bench, probe, capacity) to command-line flags, so each has its
// name, default and help once, here beside the field it sets: most set a
// Config field directly, the rest a Settings field that Settings.Apply
// checks and applies.
type Flags struct {
	Config   Config
	Settings Settings
	// fs is the flag set registered on, to tell an --api-key-env the user
	// typed from its default.
	fs *pflag.FlagSet
}

// Register adds the flags to fs; defaultAPI is --api's default.
func (f *Flags) Register(fs *pflag.FlagSet, defaultAPI string) {
	c, s := &f.Config, &f.Settings
	f.fs = fs
	fs.StringVar(&c.API, "api", defaultAPI, "API shape: "+strings.Join(endpoint.Names, ", ")+", auto (ask the server which it speaks), or a server's name for its API such as vllm (docs/APIS.md)")
	fs.StringVar(&c.Model, "model", "", "model name to request (default: the server's first model from /v1/models)")
	fs.StringVar(&c.Label, "label", "", "label for this run in tables (default: the model name)")
	fs.StringVar(&s.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a bearer token, written nowhere)")
	fs.DurationVar(&c.Timeout, "timeout", DefaultTimeout, "give up on a request after this long (0: never)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", DefaultIdleTimeout, "give up on a request when no byte arrives for this long (0: never)")
	fs.DurationVar(&c.Grace, "grace", DefaultGrace, "after Ctrl-C, how long in-flight requests may finish before they are cut (0: at once)")
	fs.IntVar(&c.Warmup, "warmup", 0, "requests sent one at a time before the measured ones (recorded as warm-up)")
	fs.BoolVar(&c.Prewarm, "prewarm", true, "open the connections a phase needs before it starts, so TCP set-up is not in TTFT")
	fs.BoolVar(&c.NormalPriority, "normal-priority", false, "keep the dispatcher's thread at the normal scheduling policy (by default it asks for SCHED_FIFO, then SCHED_RR, then nice -20, where permitted)")
	fs.BoolVar(&c.Insecure, "insecure", false, "accept self-signed TLS certificates")
	fs.StringVar(&s.Salt, "salt", "on", "on: fill each prompt's salt slot from a per-run seed so an earlier run's prefix cache cannot help; off: send prompts verbatim (cache studies)")
	fs.Int64Var(&c.SaltSeed, "salt-seed", 0, "seed for the salt words (default: random, recorded in the trace)")
	fs.BoolVar(&c.SendTokenIDs, "send-token-ids", false, "send prompts as token ids (openai-completions, llamacpp; the workload's tokenizer must be the model's)")
	fs.BoolVar(&c.ContinuousUsage, "continuous-usage", false, "ask for per-chunk token counts (vLLM's continuous_usage_stats)")
	fs.StringArrayVar(&s.Headers, "header", nil, `HTTP header sent with every request, as "NAME: VALUE" (repeatable; e.g. a routing header, or Authorization instead of --api-key-env); recorded in the trace with secret values redacted`)
	fs.StringVar(&s.ExtraBody, "extra-body", "", `JSON object merged into every request body, or @FILE holding one (e.g. '{"chat_template_kwargs":{"enable_thinking":false}}', '{"top_k":20}'); may add fields and extend objects, never replace a field llmreplay sends itself`)
	fs.StringVar(&c.ServerMetrics, "server-metrics", ServerMetricsAuto, "scrape the server's Prometheus /metrics into the trace during the run (queue, running requests, KV cache, preemptions): auto (BASE/metrics, skipped when absent), off, or the endpoint's URL")
	fs.DurationVar(&c.ServerMetricsInterval, "server-metrics-interval", servermetrics.DefaultInterval, "time between /metrics scrapes and --watch-pid samples (each times out at 4/5 of it)")
	fs.IntVar(&c.WatchPID, "watch-pid", 0, "process id of the server on this machine: sample its memory (RSS), CPU time and threads, with its child processes', into the trace, and GPU memory when nvidia-smi is installed (Linux /proc; macOS through ps, without threads)")
	fs.StringVar(&c.ServerTokenize, "server-tokenize", ServerTokenizeAuto, "ask the server's own tokenizer (POST /tokenize of llama.cpp, vLLM, SGLang, TGI) to count each distinct prompt before the run and each response's text after it, off the timing path, so usage is judged in the model's vocabulary: auto (use it when the server answers) or off")
	fs.StringVar(&c.SessionHeader, "session-header", DefaultSessionHeader, "workloads with sessions (--turns): the HTTP header that carries each conversation's stable id on all its turns, for routers with session affinity (llm-d, sticky gateways); off: none")
	fs.StringVar(&c.Timestamps, "timestamps", TimestampsAuto, "source of chunk arrival times: kernel (the kernel's receive stamp of each read, Linux SO_TIMESTAMPING: no client scheduling delay in it), user (the time the read returned to llmreplay), auto (kernel where the system offers it); the trace header records the source")
	fs.BoolVar(&c.ChunkUserTimes, "chunk-user-times", false, "with kernel stamps, keep each chunk's user-space time beside its stamp, to see the client's delay event by event (about 3 bytes more per token); without it each request keeps the mean and largest delay")
	fs.StringVar(&c.ServerCache, "server-cache", "", "the server's prompt cache where the API has a per-request switch (llama.cpp cache_prompt): on, off, default (send nothing); default: off with --salt on, else the server's default")
}

// Resolve is the Config the flags give for workload wl (cut to a
// --shard's part) and trace out, at now. Only the flags' words are checked
// here (Settings.Apply, its errors naming Settings' fields); the rest
// once, by Config.Resolve.
func (f *Flags) Resolve(wl *workload.Workload, out string, now time.Time) (Config, error) {
	cfg := f.Config
	cfg.Workload, cfg.Trace = wl, out
	s := f.Settings
	s.APIKeyEnvNamed = f.fs != nil && f.fs.Changed("api-key-env")
	if err := s.Apply(&cfg, now); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
