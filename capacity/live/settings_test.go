package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/replay"
)

// TestSettingsRefuseEachBadValue: every value a person states for a
// search is checked before anything starts, and the error names the
// setting's field with the value and a form that is accepted.
func TestSettingsRefuseEachBadValue(t *testing.T) {
	ok := Settings{SLO: "ttft_p90<=1s", Axis: AxisConcurrency, TimeScale: 1, InputTokens: 100, MaxTokens: 8}
	cases := []struct {
		name   string
		change func(*Settings)
		field  string
		want   string
	}{
		{"no SLO", func(s *Settings) { s.SLO = " " }, "SLO", "no SLO: give the bound the load must meet, e.g. SLO 'ttft_p90<=1s'"},
		{"bad SLO", func(s *Settings) { s.SLO = "bogus" }, "SLO", `SLO: SLO term "bogus"`},
		{"bad goodput bounds", func(s *Settings) { s.GoodputBounds = "x" }, "GoodputBounds", `GoodputBounds "x" has no name=duration`},
		{"axis", func(s *Settings) { s.Axis = "size" }, "Axis", `Axis "size": use concurrency or rate`},
		{"range form", func(s *Settings) { s.Range = "x" }, "Range", `Range "x": write LOW:HIGH, e.g. Range 1:64`},
		{"empty range", func(s *Settings) { s.Range = "4:1" }, "Range", `Range "4:1" is empty`},
		{"no whole user", func(s *Settings) { s.Range = "1.2:1.5" }, "Range", "holds no whole number of users"},
		{"too many users", func(s *Settings) { s.Range = "1:1000000" }, "Range", "use at most 100000 users"},
		{"resolution", func(s *Settings) { s.Resolution = -1 }, "Resolution", "Resolution -1: give a positive step"},
		{"budget", func(s *Settings) { s.MaxDuration = -1 }, "MaxRequests", "MaxRequests and MaxDuration: give 0 (no limit) or more"},
		{"round", func(s *Settings) { s.RoundDuration = -1 }, "RoundDuration", "RoundDuration -1ns: give a positive duration"},
		{"profile with URL", func(s *Settings) { s.URL, s.Profile = "http://x", "fast" }, "Profile", "Profile applies to the built-in simulator only: drop it, or drop URL"},
		{"time scale with URL", func(s *Settings) { s.URL, s.TimeScale = "http://x", 0.5 }, "TimeScale", "TimeScale applies to the built-in simulator only"},
		{"time scale", func(s *Settings) { s.TimeScale = 2 }, "TimeScale", "TimeScale 2: use a factor above 0 and at most 1"},
		{"input tokens", func(s *Settings) { s.InputTokens = 0 }, "InputTokens", "InputTokens 0: give 1 to"},
		{"max tokens", func(s *Settings) { s.MaxTokens = -3 }, "MaxTokens", "MaxTokens -3: give 1 to"},
	}
	if _, err := ok.Config(); err != nil {
		t.Fatalf("good settings refused: %v", err)
	}
	for _, c := range cases {
		s := ok
		c.change(&s)
		_, err := s.Config()
		fe := fielderr.As(err)
		if fe == nil || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a %s error saying %q", c.name, err, c.field, c.want)
		}
	}
}

// TestSettingsClaimTheTrace: a new trace's name is claimed before the run
// starts, and neither an existing Out nor an existing Report is replaced
// without Force.
func TestSettingsClaimTheTrace(t *testing.T) {
	dir := t.TempDir()
	s := Settings{SLO: "ttft_p90<=1s", Axis: AxisConcurrency, TimeScale: 1, InputTokens: 100, MaxTokens: 8, Results: dir}
	c, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	release, err := s.Claim(&c, replay.Config{}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Trace, dir) || !strings.Contains(c.Trace, "sim "+DefaultProfile) && !strings.Contains(c.Trace, "sim-"+DefaultProfile) {
		t.Errorf("default trace %q: want it under %s, named by the simulator's label", c.Trace, dir)
	}
	if _, err := os.Stat(c.Trace); err != nil {
		t.Errorf("the trace's name is not claimed: %v", err)
	}
	release()
	if _, err := os.Stat(c.Trace); !os.IsNotExist(err) {
		t.Errorf("release left the empty claim %s", c.Trace)
	}

	taken := filepath.Join(dir, "taken.trace.zst")
	os.WriteFile(taken, []byte("x"), 0o644)
	s.Out = taken
	if _, err := s.Claim(&c, replay.Config{}, testNow); fielderr.As(err) == nil || fielderr.As(err).Field != "Out" || !strings.Contains(err.Error(), "it exists") {
		t.Errorf("an existing Out: got %v, want an Out error saying it exists", err)
	}
	s.Out, s.Report = filepath.Join(dir, "new.trace.zst"), taken
	if _, err := s.Claim(&c, replay.Config{}, testNow); fielderr.As(err) == nil || fielderr.As(err).Field != "Report" {
		t.Errorf("a report over an existing file: got %v, want a Report error", err)
	}
	s.Out, s.Report = filepath.Join(dir, "no", "x.trace.zst"), ""
	if _, err := s.Claim(&c, replay.Config{}, testNow); !strings.Contains(testutil.ErrText(err), "the folder "+filepath.Join(dir, "no")+" does not exist") {
		t.Errorf("Out in a missing folder: got %v", err)
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

var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
