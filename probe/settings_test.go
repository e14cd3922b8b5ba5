package probe

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestSettingsCheckEachMode: a salt, the simulator's settings with a URL,
// an unknown mode, another mode's setting and a stated 0 are refused by
// field before anything starts; the shared-system mode takes the sizes
// the modes share.
func TestSettingsCheckEachMode(t *testing.T) {
	ok := Settings{Mode: ModeRepeat, Config: Config{InputTokens: 100, MaxTokens: 8, Repeats: 6},
		Shared: SharedConfig{SystemTokens: 512, Rounds: 4, Requests: 4}}
	stated := func(fields ...string) fielderr.Given {
		return func(f string) bool {
			for _, s := range fields {
				if s == f {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		change func(*Settings)
		given  fielderr.Given
		url    string
		field  string
	}{
		{func(*Settings) {}, stated("Salt"), "", "Salt"},
		{func(s *Settings) { s.NoCache = true }, nil, "http://x", "Profile"},
		{func(*Settings) {}, stated("Profile"), "http://x", "Profile"},
		{func(s *Settings) { s.Mode = "warm" }, nil, "", "Mode"},
		{func(*Settings) {}, stated("Rounds"), "", "Rounds"},
		{func(s *Settings) { s.Mode = ModeSharedSystem }, stated("Repeats"), "", "Repeats"},
		{func(s *Settings) { s.Mode, s.Shared.Requests = ModeSharedSystem, 0 }, nil, "", "Requests"},
		{func(s *Settings) { s.Mode, s.Shared.Rounds = ModeSharedSystem, 1 }, nil, "", "Rounds"},
		{func(s *Settings) { s.Config.MaxTokens = 0 }, nil, "", "MaxTokens"},
		{func(s *Settings) { s.Config.InputTokens = 5 }, nil, "", "InputTokens"},
	} {
		s := ok
		c.change(&s)
		if fe := fielderr.As(s.Check(c.given, c.url)); fe == nil || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a %s error", s, fe, c.field)
		}
	}
	s := ok
	s.Mode = ModeSharedSystem
	if err := s.Check(stated("InputTokens"), ""); err != nil || s.Shared.UserTokens != 100 || s.Shared.MaxTokens != 8 {
		t.Errorf("shared-system with --input-tokens: %v, user %d tokens, max %d", err, s.Shared.UserTokens, s.Shared.MaxTokens)
	}
}
