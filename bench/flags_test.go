package bench

import (
	"slices"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/workload"
)

// TestFlagsFillConfig: the flags set their fields, with the sweep's
// defaults where none is given.
func TestFlagsFillConfig(t *testing.T) {
	var c Config
	if _, err := cli.ParseFlags(c.RegisterFlags, "--concurrency", "1,8", "--max-tokens", "64", "--shape", "completion"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Concurrency, []int{1, 8}) || c.MaxTokens != 64 || c.Shape != workload.ShapeCompletion {
		t.Errorf("given: %+v", c)
	}
	if !slices.Equal(c.InputTokens, DefaultInputTokens) || c.Repeats != DefaultRepeats || c.Profile != DefaultProfile ||
		c.Results != DefaultResults || c.Definitions != analyze.DefaultDefinitions || c.Tokenizer != workload.DefaultTokenizer {
		t.Errorf("defaults: %+v", c)
	}
}
