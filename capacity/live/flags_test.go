package live

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsFillSettingsAndFlagOfNamesThem: the flags set their fields,
// and FlagOf names a flag RegisterFlags binds for every field but the
// server's address (the sending commands' --url).
func TestFlagsFillSettingsAndFlagOfNamesThem(t *testing.T) {
	var s Settings
	fs := pflag.NewFlagSet("capacity", pflag.ContinueOnError)
	s.RegisterFlags(fs)
	if err := fs.Parse([]string{"--slo", "ttft_p90<=1s", "--axis", "rate", "--range", "1:8", "-o", "x.trace.zst", "--force"}); err != nil {
		t.Fatal(err)
	}
	if s.SLO != "ttft_p90<=1s" || s.Axis != AxisRate || s.Range != "1:8" || s.Out != "x.trace.zst" || !s.Force {
		t.Errorf("given: %+v", s)
	}
	if s.Profile != DefaultProfile || s.InputTokens != 800 || s.MaxTokens != 256 || s.RoundDuration != DefaultRoundDuration || s.TimeScale != 1 {
		t.Errorf("defaults: %+v", s)
	}
	for field, flag := range FlagOf {
		name := strings.TrimLeft(flag, "-")
		f := fs.Lookup(name)
		if len(flag) == 2 {
			f = fs.ShorthandLookup(name)
		}
		if f == nil && field != "URL" {
			t.Errorf("FlagOf[%s] = %s: no such flag", field, flag)
		}
	}
}
