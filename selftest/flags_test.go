package selftest

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsFillConfigAndOutputs: the flags set their fields, and FlagOf
// names each flag bound, so every field error says the flag.
func TestFlagsFillConfigAndOutputs(t *testing.T) {
	var (
		c Config
		o Outputs
	)
	fs := pflag.NewFlagSet("selftest", pflag.ContinueOnError)
	c.RegisterFlags(fs)
	o.RegisterFlags(fs)
	if err := fs.Parse([]string{"--short", "--section", "1,3", "--repeat", "2", "-o", "t.md"}); err != nil {
		t.Fatal(err)
	}
	if !c.Short || !slices.Equal(c.Sections, []int{1, 3}) || c.Repeats != 2 || o.Table != "t.md" || c.Timestamps != "auto" {
		t.Errorf("%+v %+v", c, o)
	}
	named := map[string]bool{}
	for _, flag := range FlagOf {
		named[strings.TrimLeft(flag, "-")] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !named[f.Name] && !named[f.Shorthand] {
			t.Errorf("--%s: not in FlagOf", f.Name)
		}
	})
}
