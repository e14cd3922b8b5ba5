package live

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/replay"
)

// TestAnnounceSaysTheSimulatorAndEachRound: a search on the built-in
// simulator says so before it starts, one on a URL does not; each probe
// round's line is said unless quiet.
func TestAnnounceSaysTheSimulatorAndEachRound(t *testing.T) {
	sum := &replay.Summary{}
	for _, c := range []struct {
		name        string
		url         string
		quiet       bool
		notice, row bool
	}{
		{"simulator", "", false, true, true},
		{"simulator, quiet", "", true, true, false},
		{"server", "http://127.0.0.1:8080", false, false, true},
		{"server, quiet", "http://127.0.0.1:8080", true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var notes bytes.Buffer
			cfg := Config{Replay: replay.Config{URL: c.url}, Profile: "fast", Axis: AxisConcurrency}
			cfg.Announce(&notes, c.quiet)
			if cfg.OnProbe != nil {
				cfg.OnProbe(4, 2, sum)
			}
			got := notes.String()
			if has := strings.Contains(got, "no --url: searching llmreplay's SIMULATED server, profile fast"); has != c.notice {
				t.Errorf("simulator notice %v, want %v: %q", has, c.notice, got)
			}
			if has := strings.Contains(got, "probe 4 users, round 2: "); has != c.row {
				t.Errorf("probe line %v, want %v: %q", has, c.row, got)
			}
		})
	}
}
