package selftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestCheckRefusesBeforeMeasuring: a bad timestamp source, a stated 0 or
// negative run count, negative wake-ups and a section outside 1–6 are
// refused by field; an unstated 0 is the default.
func TestCheckRefusesBeforeMeasuring(t *testing.T) {
	stated := func(f string) bool { return f == "Repeats" }
	for _, c := range []struct {
		cfg   Config
		given fielderr.Given
		field string
	}{
		{Config{Timestamps: "maybe"}, nil, "Timestamps"},
		{Config{Repeats: 0}, stated, "Repeats"},
		{Config{Repeats: -1}, nil, "Repeats"},
		{Config{FloorWakeups: -1}, nil, "FloorWakeups"},
		{Config{Sections: []int{1, 7}}, nil, "Sections"},
	} {
		if fe := fielderr.As(c.cfg.Check(c.given)); fe == nil || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a %s error", c.cfg, fe, c.field)
		}
	}
	if err := (Config{Sections: []int{6}}).Check(nil); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
}

// TestOutputsAreClaimedBeforeTheRun: an existing table or profile is not
// replaced without Force, the profile may not be the table, and what a
// run never wrote is given up on Close.
func TestOutputsAreClaimedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken.txt")
	os.WriteFile(taken, []byte("x"), 0o644)
	for _, c := range []struct {
		o     Outputs
		field string
		want  string
	}{
		{Outputs{Table: taken}, "Table", "it exists"},
		{Outputs{CPUProfile: taken}, "CPUProfile", "it exists"},
		{Outputs{Table: filepath.Join(dir, "t"), CPUProfile: filepath.Join(dir, "t")}, "CPUProfile", "it is also the Table file"},
	} {
		_, err := c.o.Claim()
		if fe := fielderr.As(err); fe == nil || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a %s error saying %q", c.o, err, c.field, c.want)
		}
	}
	f, err := Outputs{Table: filepath.Join(dir, "table.txt"), CPUProfile: filepath.Join(dir, "cpu.prof")}.Claim()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
		t.Errorf("a run that wrote nothing left %v", left)
	}
}
