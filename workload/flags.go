package workload

import "github.com/spf13/pflag"

// FlagOf names the flag RegisterFlags binds to each BuildConfig field, for
// a command line to say the errors, which name the fields, in its words.
var FlagOf = map[string]string{"Tokenizer": "--tokenizer", "Shape": "--shape", "InputTokens": "--input-tokens", "MaxTokens": "--max-tokens",
	"Prefix": "--prefix", "Schedule": "--schedule", "Repeats": "--repeats", "Requests": "--requests", "Duration": "--duration",
	"Arrival": "--arrival", "Seed": "--seed", "TimeScale": "--time-scale", "OrphanTurns": "--orphan-turns", "Window": "--window",
	"SaltWords": "--salt-words", "Turns": "--turns", "ThinkTime": "--think-time", "Sessions": "--sessions", "SystemTokens": "--system-tokens"}

// RegisterFlags binds c's settings to flags of fs, 'workload build's
// flags: each setting's flag, default and help live here, beside the
// field (Stated and Build check the values and name the fields).
func (c *BuildConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Tokenizer, "tokenizer", DefaultTokenizer, "o200k_base, cl100k_base, the path of a Hugging Face tokenizer.json (.zst accepted), or a model id whose tokenizer.json is in the Hugging Face cache (Qwen/Qwen3-8B)")
	fs.StringVar((*string)(&c.Shape), "shape", string(ShapeChat), "chat (one user message) or completion (raw prompt)")
	fs.IntSliceVar(&c.InputTokens, "input-tokens", []int{DefaultInputTokens}, "exact prompt length in tokens; a list makes one phase set per length")
	fs.IntVar(&c.MaxTokens, "max-tokens", DefaultMaxTokens, "output tokens per request (the server is asked to ignore end-of-sequence)")
	fs.StringVar(&c.Prefix, "prefix", DefaultPrefix, "unique (no shared prefix past the salt), shared (identical prompts) or shared:K (first K tokens identical)")
	fs.StringVar(&c.Schedule, "schedule", DefaultSchedule, "burst:LEVELS, closed:LEVELS, rate:R (rate:R1,R2,… for a rate sweep) or trace:FILE")
	fs.IntVar(&c.Repeats, "repeats", 0, "phases per level (default 6 for burst: the fewest whose median over runs has a 95% interval; 1 otherwise)")
	fs.IntVar(&c.Requests, "requests", 0, "requests per phase for closed (default 4×C) and rate (default 100)")
	fs.DurationVar(&c.Duration, "duration", 0, "rate phases: last this long (the arrivals before it) instead of --requests, e.g. 60s")
	fs.StringVar(&c.Arrival, "arrival", "", "rate arrivals: poisson (default), constant or gamma:SHAPE")
	fs.Int64Var(&c.Seed, "seed", 1, "seed for the prose, the salt and random arrivals")
	fs.Float64Var(&c.TimeScale, "time-scale", DefaultTimeScale, "trace: multiply the log's times by this (0.5 replays it twice as fast)")
	fs.StringVar(&c.OrphanTurns, "orphan-turns", OrphansError, "trace: a log's turn whose parent_chat_id is on no line: error (refuse the log) or first (start its session there, for a log cut from a longer one)")
	fs.StringVar(&c.Window, "window", "", "trace: START:END seconds of the log to keep, counted from its first request (either may be empty); offsets then count from START")
	fs.IntVar(&c.SaltWords, "salt-words", DefaultSaltWords, "one-token words at the start of each prompt that the replay re-draws per run (0: none)")
	fs.StringVar(&c.Turns, "turns", "", "make conversations: N turns per session, or LO..HI (uniform; LO:HI too); each turn resends the conversation so far with the answer received")
	fs.StringVar(&c.ThinkTime, "think-time", "", "sessions: pause between a response's end and the next turn: DURATION, LO..HI (uniform; LO:HI too) or exp:MEAN (default 0)")
	fs.IntVar(&c.Sessions, "sessions", 0, "sessions per phase for closed (default 4×C) and rate (default 100) schedules; a burst of C starts C sessions")
	fs.IntVar(&c.SystemTokens, "system-tokens", 0, "a system prompt of exactly K tokens shared by every request (every session's first turn); 0: none")
}
