package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
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

// TestClaimRefusesAResultsFolderThatIsAFile: a trace to name under a
// results folder that is a file, or lies under one, is refused naming
// Results before anything is made.
func TestClaimRefusesAResultsFolderThatIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct{ results, want string }{
		{file, "Results " + file + ": it is a file, not a folder; give a folder's path (created if missing), or move the file away"},
		{filepath.Join(file, "runs"), "Results " + filepath.Join(file, "runs") + ": " + file + " is a file, not a folder, so nothing can go under it; give a folder's path (created if missing)"},
	} {
		s := Settings{SLO: "ttft_p90<=1s", Axis: AxisConcurrency, TimeScale: 1, InputTokens: 100, MaxTokens: 8, Results: c.results}
		lc, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Claim(&lc, replay.Config{}, time.Now())
		out, ok := fielderr.Rename(err, map[string]string{"Results": "Results"})
		if !ok || out.Error() != c.want {
			t.Errorf("got  %v\nwant %q", err, c.want)
		}
	}
}
