package kube

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/cli"
)

// TestFlagsFillJobConfigAndFlagOfNamesThem: the flags set their fields
// with the Job's defaults, and FlagOf names each flag RegisterFlags binds.
func TestFlagsFillJobConfigAndFlagOfNamesThem(t *testing.T) {
	var c JobConfig
	fs, err := cli.ParseFlags(c.RegisterFlags, "--shards", "4", "--image", "llmreplay:1", "--retries", "0")
	if err != nil {
		t.Fatal(err)
	}
	if c.Shards != 4 || c.Image != "llmreplay:1" || c.BackoffLimitPerIndex != 0 || c.Name != "llmreplay" || c.CPU != "2" || c.Memory != "1Gi" {
		t.Errorf("%+v", c)
	}
	if u := cli.Unnamed(fs, FlagOf); len(u) > 0 {
		t.Errorf("not in FlagOf: %v", u)
	}
}
