package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/workload"
)

// TestPrepareChecksBeforeItCreates: a run's settings are checked before
// its trace's folder is made or an existing trace is replaced; a trace
// not given is named under the results folder, and one that is an input
// or exists (without force) is refused naming Trace.
func TestPrepareChecksBeforeItCreates(t *testing.T) {
	wl, err := workload.Build(workload.BuildConfig{InputTokens: []int{64}, MaxTokens: 4, Schedule: "burst:1", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	existing := filepath.Join(dir, "old.trace.zst")
	os.WriteFile(existing, []byte("old"), 0o644)
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		change func(*Config)
		force  bool
		inputs []string
		field  string // "" when prepared
	}{
		{"default trace", func(*Config) {}, false, nil, ""},
		{"bad URL, nothing made", func(c *Config) { c.URL = "ftp://x" }, false, nil, "URL"},
		{"existing", func(c *Config) { c.Trace = existing }, false, nil, "Trace"},
		{"existing, forced", func(c *Config) { c.Trace = existing }, true, nil, ""},
		{"an input", func(c *Config) { c.Trace = existing }, true, []string{existing}, "Trace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(dir, "results"))
			cfg := Config{Workload: wl, URL: "http://127.0.0.1:1", API: "openai-chat", Model: "m"}
			c.change(&cfg)
			var notes bytes.Buffer
			err := cfg.Prepare(now, c.force, &notes, c.inputs...)
			if c.field != "" {
				if fe := fielderr.As(err); fe == nil || fe.Field != c.field {
					t.Fatalf("error %v, want one naming %s", err, c.field)
				}
				if _, serr := os.Stat(filepath.Join(dir, "results")); serr == nil {
					t.Error("a refused run made the results folder")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := "results" + string(filepath.Separator); c.name == "default trace" && !strings.HasPrefix(cfg.Trace, want) {
				t.Errorf("default trace %q is not under %s", cfg.Trace, want)
			} else if c.name != "default trace" && cfg.Trace != existing {
				t.Errorf("trace %q, want the one given", cfg.Trace)
			}
			if _, err := os.Stat(filepath.Dir(cfg.Trace)); err != nil {
				t.Errorf("the trace's folder was not made: %v", err)
			}
		})
	}
}
