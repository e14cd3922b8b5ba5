package selftest

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/internal/cli"
)

// TestFlagsFillConfigAndOutputs: the flags set their fields, and FlagOf
// names each flag bound, so every field error says the flag.
func TestFlagsFillConfigAndOutputs(t *testing.T) {
	var (
		c Config
		o Outputs
	)
	both := func(fs *pflag.FlagSet) { c.RegisterFlags(fs); o.RegisterFlags(fs) }
	fs, err := cli.ParseFlags(both, "--short", "--section", "1,3", "--repeat", "2", "-o", "t.md")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Short || !slices.Equal(c.Sections, []int{1, 3}) || c.Repeats != 2 || o.Table != "t.md" || c.Timestamps != "auto" {
		t.Errorf("%+v %+v", c, o)
	}
	if u := cli.Unnamed(fs, FlagOf); len(u) > 0 {
		t.Errorf("not in FlagOf: %v", u)
	}
}
