package live

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/cli"
)

// TestFlagsFillSettingsAndFlagOfNamesThem: the flags set their fields,
// and FlagOf names every flag bound, so a field's error names its flag.
func TestFlagsFillSettingsAndFlagOfNamesThem(t *testing.T) {
	var s Settings
	fs, err := cli.ParseFlags(s.RegisterFlags, "--slo", "ttft_p90<=1s", "--axis", "rate", "--range", "1:8", "-o", "x.trace.zst", "--force")
	if err != nil {
		t.Fatal(err)
	}
	if s.SLO != "ttft_p90<=1s" || s.Axis != AxisRate || s.Range != "1:8" || s.Out != "x.trace.zst" || !s.Force {
		t.Errorf("given: %+v", s)
	}
	if s.Profile != DefaultProfile || s.InputTokens != 800 || s.MaxTokens != 256 || s.RoundDuration != DefaultRoundDuration || s.TimeScale != 1 {
		t.Errorf("defaults: %+v", s)
	}
	if u := cli.Unnamed(fs, FlagOf); len(u) > 0 {
		t.Errorf("not in FlagOf: %v", u)
	}
}
