package workload

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestStatedRefusesWhatTheDefaultWouldHide: a stated 0 where 0 means the
// default is refused, a stated 0 salt words means none, and the settings
// of one kind of schedule are refused on another.
func TestStatedRefusesWhatTheDefaultWouldHide(t *testing.T) {
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
		cfg   BuildConfig
		given fielderr.Given
		field string
	}{
		{BuildConfig{Repeats: 0, MaxTokens: 8}, stated("Repeats"), "Repeats"},
		{BuildConfig{TimeScale: 0, Schedule: "trace:x.jsonl"}, stated("TimeScale"), "TimeScale"},
		{BuildConfig{Schedule: "trace:x.jsonl", InputTokens: []int{5}}, stated("InputTokens"), "InputTokens"},
		{BuildConfig{Schedule: "burst:1", TimeScale: 2}, stated("TimeScale"), "TimeScale"},
		{BuildConfig{SaltWords: -1}, stated("SaltWords"), "SaltWords"},
		{BuildConfig{SaltWords: -3}, nil, "SaltWords"},
	} {
		if fe := fielderr.As(c.cfg.Stated(c.given)); fe == nil || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a %s error", c.cfg, fe, c.field)
		}
	}
	c := BuildConfig{Schedule: "burst:1"}
	if err := c.Stated(stated("SaltWords")); err != nil || c.SaltWords != NoSaltWords {
		t.Errorf("a stated 0 salt words: %d, %v; want none", c.SaltWords, err)
	}
	c = BuildConfig{SaltWords: NoSaltWords}
	if err := c.Stated(nil); err != nil || c.SaltWords != NoSaltWords {
		t.Errorf("NoSaltWords from Go: %d, %v", c.SaltWords, err)
	}
}
