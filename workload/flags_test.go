package workload

import (
	"slices"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/cli"
)

// TestBuildFlagsFillBuildConfig: the flags set their fields, a flag not
// given leaves the package's default, and FlagOf names every flag bound.
func TestBuildFlagsFillBuildConfig(t *testing.T) {
	var c BuildConfig
	fs, err := cli.ParseFlags(c.RegisterFlags, "--schedule", "rate:2", "--input-tokens", "100,200", "--duration", "1m", "--turns", "2..3", "--shape", "completion")
	if err != nil {
		t.Fatal(err)
	}
	if c.Schedule != "rate:2" || !slices.Equal(c.InputTokens, []int{100, 200}) || c.Duration != time.Minute || c.Turns != "2..3" || c.Shape != ShapeCompletion {
		t.Errorf("given: %+v", c)
	}
	if c.Tokenizer != DefaultTokenizer || c.MaxTokens != DefaultMaxTokens || c.SaltWords != DefaultSaltWords || c.Prefix != DefaultPrefix ||
		c.TimeScale != DefaultTimeScale || c.OrphanTurns != OrphansError || c.Seed != 1 || c.Repeats != 0 {
		t.Errorf("defaults: %+v", c)
	}
	if u := cli.Unnamed(fs, FlagOf); len(u) > 0 {
		t.Errorf("not in FlagOf: %v", u)
	}
}
