package live

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// FlagOf names the flag that sets each Settings field (RegisterFlags',
// and the server's --url), for a command line to say the errors, which
// name the fields, in its words.
var FlagOf = map[string]string{"SLO": "--slo", "GoodputBounds": "--goodput-bounds", "Axis": "--axis", "Range": "--range",
	"Resolution": "--resolution", "MaxRequests": "--max-requests", "MaxDuration": "--max-duration", "RoundDuration": "--round-duration",
	"TimeScale": "--time-scale", "URL": "--url", "Profile": "--profile", "InputTokens": "--input-tokens", "MaxTokens": "--max-tokens",
	"Tokenizer": "--tokenizer", "Shape": "--shape", "Results": "--results", "Out": "-o", "Resume": "--resume", "Report": "--report",
	"Force": "--force", "From": "--from"}

// RegisterFlags binds the search's settings to flags of fs, 'llmreplay
// capacity's flags but the server's (--url and replay's endpoint flags):
// each setting's flag, default and help live here, beside the field
// (Config, Claim and SLOs check the values and name the fields).
func (c *Settings) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.SLO, "slo", "", "the SLO the load must meet: percentile bounds of ttft, tpot, e2e and/or a goodput share, e.g. 'ttft_p90<=1s,tpot_p90<=50ms' or 'goodput>=95%'")
	fs.StringVar(&c.Axis, "axis", AxisConcurrency, "load axis: concurrency (closed-loop users) or rate (open-loop requests/s)")
	fs.StringVar(&c.Range, "range", "", "LOW:HIGH levels the search may probe (default 1:64 users, or 0.5:32 requests/s on the rate axis)")
	fs.Float64Var(&c.Resolution, "resolution", 0, "stop when the boundary is bracketed this narrowly (default 1 user, or 0.25 requests/s)")
	fs.IntVar(&c.MaxRequests, "max-requests", 0, "budget: stop before the search sends more requests than this (0: no limit)")
	fs.DurationVar(&c.MaxDuration, "max-duration", 0, "budget: start no probe round after the search has run this long (0: no limit)")
	fs.StringVar(&c.GoodputBounds, "goodput-bounds", analyze.DefaultSLO.String(), "per-request bounds a goodput>=P% term counts requests against (ttft=, tpot=, e2e=)")
	fs.StringVar(&c.Report, "report", "", "also write an HTML report of the trace to this file, with the SLO's curve over the probed levels, its bound and the answer")
	fs.DurationVar(&c.RoundDuration, "round-duration", DefaultRoundDuration, "rate axis: each probe round sends the rate times this many measured requests (at least 20) from an idle server; rounds are judged as independent draws, so a probe needs 8 of them (in the server's time: a --time-scale shortens it alike)")
	fs.Float64Var(&c.TimeScale, "time-scale", 1, "built-in simulator only: run the profile this many times faster-paced (0.1: every latency ×0.1), with the SLO bounds scaled alike")
	fs.StringVar(&c.Profile, "profile", DefaultProfile, "simulator profile when no --url ("+strings.Join(sim.ProfileNames(), ", ")+")")
	fs.IntVar(&c.InputTokens, "input-tokens", 800, "exact prompt length in tokens")
	fs.IntVar(&c.MaxTokens, "max-tokens", 256, "output tokens per request")
	fs.StringVar(&c.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar(&c.Shape, "shape", string(workload.ShapeChat), "chat or completion")
	fs.StringVar(&c.Results, "results", trace.ResultsDir, "folder for the trace")
	fs.StringVarP(&c.Out, "out", "o", "", "trace path (default: under --results, named by label and time)")
	fs.StringVar(&c.From, "from", "", "answer again from a capacity trace (for --slo, default its own), sending nothing")
	fs.StringVar(&c.Resume, "resume", "", "continue the search a stopped run recorded in this capacity trace (same flags as that run); the trace grows in place")
	fs.BoolVar(&c.Force, "force", false, "replace the -o trace or the --report file if it exists (never an input)")
}
