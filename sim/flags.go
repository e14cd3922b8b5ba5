package sim

import (
	"strings"

	"github.com/spf13/pflag"
)

// RegisterFlags binds c's settings to flags of fs, 'llmreplay sim's
// flags for the engine and its faults: each setting's flag, default and
// help live here, beside the field.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.IntVar(&c.Slots, "slots", 0, "requests served at once, overriding the profile (like llama-server -np)")
	fs.StringVar(&c.Tokenizer, "tokenizer", "o200k_base", "tokenizer for prompts and the answer: o200k_base, cl100k_base, a tokenizer.json path or a model id in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar(&c.Model, "model", "", "model name to report (default: the profile name)")
	fs.IntVar(&c.DefaultMaxTokens, "default-max-tokens", 256, "output tokens when a request sets no limit")
	fs.BoolVar(&c.DisablePrefixCache, "no-prefix-cache", false, "prefill every prompt token, even of a repeated prompt")
	fs.StringVar(&c.PoseAs, "identity", "", "answer the identity routes of one engine, for --api auto: "+strings.Join(Identities, ", ")+" (default: a generic OpenAI-compatible server)")
	fs.BoolVar(&c.SendTimes, "send-times", false, `test mode: every chunk carries "sim_sent_unix_ns", the server's send time`)
	fs.Int64Var(&c.Seed, "seed", 1, "seed for --error-rate")
	fs.IntVar(&c.ReasoningTokens, "reasoning-tokens", 0, "the first N tokens of every answer are reasoning, in the API's reasoning form (chat reasoning_content, Anthropic thinking, Responses reasoning, Ollama thinking)")
	fs.DurationVar(&c.TokenInterval, "token-interval", 0, "pace every stream at one token per interval (e.g. 20ms) from its first token, on top of the profile; with --profile fast, streams of a fixed, known speed")
	fs.IntVar(&c.MaxContext, "max-context", 0, "fault: HTTP 400 for prompts longer than N tokens (0 = no limit)")
	fs.BoolVar(&c.NoStream, "no-stream", false, "fault: send the whole answer as one chunk at the end")
	fs.IntVar(&c.TokensPerChunk, "tokens-per-chunk", 1, "fault: K tokens per streamed chunk")
	fs.BoolVar(&c.DropUsage, "drop-usage", false, "fault: omit usage, timings and eval counts")
	fs.IntVar(&c.InflateUsage, "inflate-usage", 0, "fault: report N times the output tokens sent (the flag alone means 10)")
	fs.Lookup("inflate-usage").NoOptDefVal = "10"
	fs.IntVar(&c.StallAfter, "stall-after", 0, "fault: stop sending after N tokens and keep the connection open")
	fs.IntVar(&c.ResetAfter, "reset-after", 0, "fault: reset the TCP connection after N tokens")
	fs.Float64Var(&c.ErrorRate, "error-rate", 0, "fault: fraction of requests answered with HTTP 500 (seeded)")
	fs.IntVar(&c.Overrun, "overrun", 0, "fault: ignore max_tokens and send K times as many tokens (at most 131072)")
	fs.DurationVar(&c.QuadraticPrefill, "quadratic-prefill", 0, "fault: prefill time grows with input length²: each prompt token also costs this per earlier prompt token (e.g. 50ns: +1.6 s at 8,000 tokens); not with --profile fast")
}
