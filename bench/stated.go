package bench

import "github.com/llmreplay/llmreplay/internal/fielderr"

// Stated refuses what a person stated of c that c would not honour,
// given saying which fields were stated: a Profile with Replay.URL set
// (it picks the built-in simulator's engine, which a URL replaces), and
// a stated 0 where 0 means the default (MaxTokens, Repeats). Every other
// check is Check's.
func (c *Config) Stated(given fielderr.Given) error {
	if c.Replay.URL != "" && given.Has("Profile") {
		return fielderr.Newf("bench: Config", "Profile", "{Profile} applies to the built-in simulator only: drop it, or drop {URL}")
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"MaxTokens", c.MaxTokens}, {"Repeats", c.Repeats}} {
		if n.v == 0 && given.Has(n.field) {
			return fielderr.Newf("bench: Config", n.field, "{"+n.field+"} %d: give at least 1", n.v)
		}
	}
	return nil
}
