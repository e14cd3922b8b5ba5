package bench

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

// RegisterFlags binds c's sweep settings to flags of fs, 'llmreplay
// bench's flags but the server's (--url and replay's endpoint flags) and
// what it prints: each setting's flag, default and help live here, beside
// the field (Stated and Check check the values and name the fields).
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Profile, "profile", DefaultProfile, "simulator profile when no --url ("+strings.Join(sim.ProfileNames(), ", ")+")")
	fs.IntSliceVar(&c.Concurrency, "concurrency", DefaultConcurrency, "concurrency levels: streams released together")
	fs.IntSliceVar(&c.InputTokens, "input-tokens", DefaultInputTokens, "exact prompt length(s) in tokens")
	fs.IntVar(&c.MaxTokens, "max-tokens", DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&c.Repeats, "repeats", DefaultRepeats, "runs of each level (the table shows medians)")
	fs.StringVar(&c.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar((*string)(&c.Shape), "shape", string(workload.ShapeChat), "chat or completion")
	fs.StringVar(&c.Results, "results", DefaultResults, "folder for the workload, trace and tables")
	fs.StringVar(&c.Definitions, "definitions", analyze.DefaultDefinitions, "metric definition set for the table")
}
