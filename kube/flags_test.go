package kube

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsFillJobConfigAndFlagOfNamesThem: the flags set their fields
// with the Job's defaults, and FlagOf names each flag RegisterFlags binds.
func TestFlagsFillJobConfigAndFlagOfNamesThem(t *testing.T) {
	var c JobConfig
	fs := pflag.NewFlagSet("job", pflag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--shards", "4", "--image", "llmreplay:1", "--retries", "0"}); err != nil {
		t.Fatal(err)
	}
	if c.Shards != 4 || c.Image != "llmreplay:1" || c.BackoffLimitPerIndex != 0 || c.Name != "llmreplay" || c.CPU != "2" || c.Memory != "1Gi" {
		t.Errorf("%+v", c)
	}
	named := map[string]bool{}
	for _, flag := range FlagOf {
		named[flag] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !named["--"+f.Name] {
			t.Errorf("--%s: not in FlagOf, so its field's errors would not name it", f.Name)
		}
	})
}
