package probe

import (
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/workload"
)

// RegisterFlags binds s's settings to flags of fs, 'probe
// prefix-cache's flags but the server's (--url and replay's endpoint
// flags) and its output: each setting's flag, default and help live here,
// beside the field (Check checks the values and names the fields).
func (s *Settings) RegisterFlags(fs *pflag.FlagSet) {
	c := &s.Config
	fs.StringVar(&s.Profile, "profile", sim.DefaultProfile, "simulator profile when no --url")
	fs.BoolVar(&s.NoCache, "no-prefix-cache", false, "the built-in simulator without its prefix cache (to see the probe fail)")
	fs.StringVar(&s.Mode, "mode", ModeRepeat, "repeat (new, same, different, first again) or shared-system (rounds sharing a system prompt)")
	fs.IntVar(&s.Shared.SystemTokens, "system-tokens", DefaultSystemTokens, "shared-system: the shared system prompt's exact length in tokens")
	fs.IntVar(&s.Shared.Rounds, "rounds", DefaultRounds, "shared-system: rounds (the first is the cold one)")
	fs.IntVar(&s.Shared.Requests, "round-requests", DefaultRoundRequests, "shared-system: requests per round, sent together")
	fs.IntVar(&c.InputTokens, "input-tokens", DefaultInputTokens, "exact prompt length in tokens (shared-system: the user message, default 64)")
	fs.IntVar(&c.MaxTokens, "max-tokens", DefaultMaxTokens, "output tokens per request")
	fs.IntVar(&c.Repeats, "repeats", DefaultRepeats, "prompts per step (6 or more give a TTFT verdict)")
	fs.StringVar(&c.Tokenizer, "tokenizer", workload.DefaultTokenizer, "tokenizer for exact prompts: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar((*string)(&c.Shape), "shape", string(workload.ShapeChat), "chat or completion")
	fs.Int64Var(&c.Seed, "seed", 0, "seed for the prompts (0: a new one each run, so no earlier run's cache holds them)")
}
