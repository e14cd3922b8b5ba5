package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestBuildFlagsFillBuildConfig: the flags set their fields, and a flag
// not given leaves the package's default.
func TestBuildFlagsFillBuildConfig(t *testing.T) {
	var c BuildConfig
	fs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--schedule", "rate:2", "--input-tokens", "100,200", "--duration", "1m", "--turns", "2..3", "--shape", "completion"}); err != nil {
		t.Fatal(err)
	}
	if c.Schedule != "rate:2" || !slices.Equal(c.InputTokens, []int{100, 200}) || c.Duration != time.Minute || c.Turns != "2..3" || c.Shape != ShapeCompletion {
		t.Errorf("given: %+v", c)
	}
	if c.Tokenizer != DefaultTokenizer || c.MaxTokens != DefaultMaxTokens || c.SaltWords != DefaultSaltWords || c.Prefix != DefaultPrefix ||
		c.TimeScale != DefaultTimeScale || c.OrphanTurns != OrphansError || c.Seed != 1 || c.Repeats != 0 {
		t.Errorf("defaults: %+v", c)
	}
}

// TestFlagOfNamesEveryFlag: every flag bound is in FlagOf, so an error
// naming its field names the flag.
func TestFlagOfNamesEveryFlag(t *testing.T) {
	fs := pflag.NewFlagSet("flags", pflag.ContinueOnError)
	var c BuildConfig
	c.RegisterFlags(fs)
	named := map[string]bool{}
	for _, flag := range FlagOf {
		named[strings.TrimPrefix(flag, "--")] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !named[f.Name] {
			t.Errorf("--%s: not in FlagOf", f.Name)
		}
	})
}
