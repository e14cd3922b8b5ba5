package sim

import (
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/cli"
)

// TestFlagsFillConfig: the flags set their fields; --inflate-usage alone
// means 10 times the tokens sent.
func TestFlagsFillConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want func(Config) bool
	}{
		{nil, func(c Config) bool {
			return c.Tokenizer == "o200k_base" && c.DefaultMaxTokens == 256 && c.Seed == 1 && c.TokensPerChunk == 1
		}},
		{[]string{"--inflate-usage"}, func(c Config) bool { return c.InflateUsage == 10 }},
		{[]string{"--inflate-usage=3"}, func(c Config) bool { return c.InflateUsage == 3 }},
		{[]string{"--slots", "4", "--token-interval", "20ms", "--no-stream", "--identity", "vllm"},
			func(c Config) bool {
				return c.Slots == 4 && c.TokenInterval == 20*time.Millisecond && c.NoStream && c.PoseAs == "vllm"
			}},
	} {
		var c Config
		if _, err := cli.ParseFlags(c.RegisterFlags, tc.args...); err != nil || !tc.want(c) {
			t.Errorf("%v: %v, %+v", tc.args, err, c)
		}
	}
}
