package bench

import (
	"slices"
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
)

// TestStatedRefusesWhatWouldBeIgnored: a profile stated for a run on a
// URL and a stated 0 (which the defaults would replace) are refused
// naming their field; the same values unstated are the defaults' to fill.
func TestStatedRefusesWhatWouldBeIgnored(t *testing.T) {
	stated := func(fields ...string) fielderr.Given {
		return func(f string) bool { return slices.Contains(fields, f) }
	}
	for _, c := range []struct {
		name  string
		cfg   Config
		given fielderr.Given
		want  string
	}{
		{"defaults", Config{}, nil, ""},
		{"profile on the simulator", Config{Profile: "fast"}, stated("Profile"), ""},
		{"profile with a URL", Config{Profile: "fast", Replay: replay.Config{URL: "http://x"}}, stated("Profile"),
			"bench: Config: Profile applies to the built-in simulator only: drop it, or drop URL"},
		{"default profile with a URL", Config{Profile: "fast", Replay: replay.Config{URL: "http://x"}}, nil, ""},
		{"stated 0 tokens", Config{}, stated("MaxTokens"), "bench: Config: MaxTokens 0: give at least 1"},
		{"stated 0 repeats", Config{MaxTokens: 8}, stated("MaxTokens", "Repeats"), "bench: Config: Repeats 0: give at least 1"},
		{"negative is Check's", Config{MaxTokens: -1, Repeats: 1}, stated("MaxTokens", "Repeats"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if err := c.cfg.Stated(c.given); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
