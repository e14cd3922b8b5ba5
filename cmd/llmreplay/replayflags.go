package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/replay/progress"
	"github.com/llmreplay/llmreplay/servermetrics"
	"github.com/llmreplay/llmreplay/workload"
)

// replayFlagOf names the flags that set replay.Settings' fields, and
// replay.Config's Trace.
var replayFlagOf = map[string]string{"Salt": "--salt", "APIKeyEnv": "--api-key-env", "Shard": "--shard", "Shards": "--shards",
	"StartAt": "--start-at", "StartIn": "--start-in", "Trace": "-o"}

// replayFlags are the endpoint flags of every command that sends
// requests (replay, bench, probe, capacity): most set a replay.Config
// field directly, the rest a replay.Settings field.
type replayFlags struct {
	cfg         replay.Config
	s           replay.Settings
	failOnError bool
	quiet       bool
	// flags is the command's flag set, to tell a --api-key-env the user
	// typed from its default.
	flags *pflag.FlagSet
}

func (f *replayFlags) register(cmd *cobra.Command, defaultAPI string) {
	fs, c := cmd.Flags(), &f.cfg
	f.flags = fs
	fs.StringVar(&c.API, "api", defaultAPI, "API shape: "+strings.Join(endpoint.Names, ", ")+", auto (ask the server which it speaks), or a server's name for its API such as vllm (docs/APIS.md)")
	fs.StringVar(&c.Model, "model", "", "model name to request (default: the server's first model from /v1/models)")
	fs.StringVar(&c.Label, "label", "", "label for this run in tables (default: the model name)")
	fs.StringVar(&f.s.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a bearer token, written nowhere)")
	fs.DurationVar(&c.Timeout, "timeout", replay.DefaultTimeout, "give up on a request after this long (0: never)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", replay.DefaultIdleTimeout, "give up on a request when no byte arrives for this long (0: never)")
	fs.DurationVar(&c.Grace, "grace", replay.DefaultGrace, "after Ctrl-C, how long in-flight requests may finish before they are cut (0: at once)")
	fs.IntVar(&c.Warmup, "warmup", 0, "requests sent one at a time before the measured ones (recorded as warm-up)")
	fs.BoolVar(&c.Prewarm, "prewarm", true, "open the connections a phase needs before it starts, so TCP set-up is not in TTFT")
	fs.BoolVar(&c.NormalPriority, "normal-priority", false, "keep the dispatcher's thread at the normal scheduling policy (by default it asks for SCHED_FIFO, then SCHED_RR, then nice -20, where permitted)")
	fs.BoolVar(&c.Insecure, "insecure", false, "accept self-signed TLS certificates")
	fs.StringVar(&f.s.Salt, "salt", "on", "on: fill each prompt's salt slot from a per-run seed so an earlier run's prefix cache cannot help; off: send prompts verbatim (cache studies)")
	fs.Int64Var(&c.SaltSeed, "salt-seed", 0, "seed for the salt words (default: random, recorded in the trace)")
	fs.BoolVar(&c.SendTokenIDs, "send-token-ids", false, "send prompts as token ids (openai-completions, llamacpp; the workload's tokenizer must be the model's)")
	fs.BoolVar(&c.ContinuousUsage, "continuous-usage", false, "ask for per-chunk token counts (vLLM's continuous_usage_stats)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress display (the summary and errors still print)")
	fs.BoolVar(&f.failOnError, "fail-on-error", false, "exit with status 1 when any request failed")
	fs.StringArrayVar(&f.s.Headers, "header", nil, `HTTP header sent with every request, as "NAME: VALUE" (repeatable; e.g. a routing header, or Authorization instead of --api-key-env); recorded in the trace with secret values redacted`)
	fs.StringVar(&f.s.ExtraBody, "extra-body", "", `JSON object merged into every request body, or @FILE holding one (e.g. '{"chat_template_kwargs":{"enable_thinking":false}}', '{"top_k":20}'); may add fields and extend objects, never replace a field llmreplay sends itself`)
	fs.StringVar(&c.ServerMetrics, "server-metrics", replay.ServerMetricsAuto, "scrape the server's Prometheus /metrics into the trace during the run (queue, running requests, KV cache, preemptions): auto (BASE/metrics, skipped when absent), off, or the endpoint's URL")
	fs.DurationVar(&c.ServerMetricsInterval, "server-metrics-interval", servermetrics.DefaultInterval, "time between /metrics scrapes and --watch-pid samples (each times out at 4/5 of it)")
	fs.IntVar(&c.WatchPID, "watch-pid", 0, "process id of the server on this machine: sample its memory (RSS), CPU time and threads, with its child processes', into the trace, and GPU memory when nvidia-smi is installed (Linux /proc; macOS through ps, without threads)")
	fs.StringVar(&c.ServerTokenize, "server-tokenize", replay.ServerTokenizeAuto, "ask the server's own tokenizer (POST /tokenize of llama.cpp, vLLM, SGLang, TGI) to count each distinct prompt before the run and each response's text after it, off the timing path, so usage is judged in the model's vocabulary: auto (use it when the server answers) or off")
	fs.StringVar(&c.SessionHeader, "session-header", replay.DefaultSessionHeader, "workloads with sessions (--turns): the HTTP header that carries each conversation's stable id on all its turns, for routers with session affinity (llm-d, sticky gateways); off: none")
	fs.StringVar(&c.Timestamps, "timestamps", replay.TimestampsAuto, "source of chunk arrival times: kernel (the kernel's receive stamp of each read, Linux SO_TIMESTAMPING: no client scheduling delay in it), user (the time the read returned to llmreplay), auto (kernel where the system offers it); the trace header records the source")
	fs.BoolVar(&c.ChunkUserTimes, "chunk-user-times", false, "with kernel stamps, keep each chunk's user-space time beside its stamp, to see the client's delay event by event (about 3 bytes more per token); without it each request keeps the mean and largest delay")
	fs.StringVar(&c.ServerCache, "server-cache", "", "the server's prompt cache where the API has a per-request switch (llama.cpp cache_prompt): on, off, default (send nothing); default: off with --salt on, else the server's default")
}

// config is the replay.Config the flags give, for workload wl (cut to
// a --shard's part) and trace out. Only the flags' words are checked
// here (replay.Settings); the rest once, by replay.Config.Resolve.
func (f *replayFlags) config(wl *workload.Workload, out string) (replay.Config, error) {
	cfg := f.cfg
	cfg.Workload, cfg.Trace = wl, out
	s := f.s
	s.APIKeyEnvNamed = f.flags != nil && f.flags.Changed("api-key-env")
	if err := s.Apply(&cfg, time.Now()); err != nil {
		return replay.Config{}, flagErrorIn(err, replayFlagOf)
	}
	return cfg, nil
}

// runExit is the exit status of a run that ended: 130 when it was
// stopped (stopped says so, with the trace's path), 1 when not one
// request succeeded, or with --fail-on-error when any failed.
func (f *replayFlags) runExit(sum *replay.Summary, stopped string) error {
	if sum.Stopped {
		return cli.Exit(130, fmt.Errorf(stopped, sum.Trace))
	}
	if err := sum.NoneSucceeded(); err != nil {
		return cli.Exit(1, err)
	}
	if f.failOnError && sum.Failed > 0 {
		return cli.Exit(1, fmt.Errorf("%d requests failed (--fail-on-error)", sum.Failed))
	}
	return nil
}

// progress starts the progress display on stderr for a run of cfg and
// hooks it to the run; nil with -q. The caller closes it when the run
// returns. It is a live bar on a terminal and plain lines elsewhere.
func (f *replayFlags) progress(cmd *cobra.Command, cfg *replay.Config) *progress.Display {
	if f.quiet {
		return nil
	}
	w := cmd.ErrOrStderr()
	d := progress.New(cmd.Context(), progress.Options{W: w, Terminal: progress.IsTerminal(w), Grace: cfg.Grace})
	cfg.OnPhase = d.Phase
	cfg.OnRecord = d.Record
	return d
}
