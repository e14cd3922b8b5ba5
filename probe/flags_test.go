package probe

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/cli"
	"github.com/llmreplay/llmreplay/sim"
)

// TestFlagsFillSettings: the flags set their fields, with the probe's
// own defaults where none is given.
func TestFlagsFillSettings(t *testing.T) {
	var s Settings
	if _, err := cli.ParseFlags(s.RegisterFlags, "--mode", "shared-system", "--rounds", "5", "--no-prefix-cache"); err != nil {
		t.Fatal(err)
	}
	if s.Mode != "shared-system" || s.Shared.Rounds != 5 || !s.NoCache {
		t.Errorf("given: %+v", s)
	}
	if s.Profile != sim.DefaultProfile || s.Config.InputTokens != DefaultInputTokens || s.Config.Repeats != DefaultRepeats ||
		s.Shared.SystemTokens != DefaultSystemTokens || s.Shared.Requests != DefaultRoundRequests || s.Config.Seed != 0 {
		t.Errorf("defaults: %+v", s)
	}
}
