package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmreplay/llmreplay/capacity"
	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// Sweep is a concurrency sweep's settings (bench's) asked instead for the
// largest concurrency meeting SLO: the search runs on the concurrency
// axis with the sweep's server, prompt and results folder, between the
// lowest and highest of Concurrency when they were stated.
type Sweep struct {
	SLO         string
	URL         string
	Profile     string
	Concurrency []int
	InputTokens []int
	MaxTokens   int
	Tokenizer   string
	Shape       string
	Results     string
}

func sweepErr(field, format string, args ...any) error {
	return fielderr.Newf("live: Sweep", field, format, args...)
}

// Settings checks what a search can take from the sweep and states the
// search. given says which settings were stated: Profile and Concurrency
// only then bound the search; Repeats and Definitions, which shape the
// sweep's table, are refused. Its errors name the Sweep's fields (SLO is
// the setting that asked for the search), the sweep's own words being
// checked before the search's.
func (w Sweep) Settings(given fielderr.Given) (Settings, error) {
	for _, field := range []string{"Repeats", "Definitions"} {
		if given.Has(field) {
			return Settings{}, sweepErr(field, "{"+field+"} applies to the sweep, not to {SLO}: drop one of them")
		}
	}
	if len(w.InputTokens) != 1 {
		return Settings{}, sweepErr("SLO", "{SLO} takes one {InputTokens} length, not %d", len(w.InputTokens))
	}
	if strings.TrimSpace(w.SLO) == "" {
		return Settings{}, sweepErr("SLO", "{SLO} is empty: give the SLO the load must meet, e.g. {SLO} 'ttft_p90<=1s'")
	}
	if _, err := capacity.ParseSLO(w.SLO); err != nil {
		return Settings{}, sweepErr("SLO", "{SLO}: %v", err)
	}
	s := Settings{SLO: w.SLO, Axis: AxisConcurrency, TimeScale: 1, URL: w.URL, InputTokens: w.InputTokens[0],
		MaxTokens: w.MaxTokens, Tokenizer: w.Tokenizer, Shape: w.Shape, Results: w.Results}
	if given.Has("Profile") {
		s.Profile = w.Profile
	}
	if given.Has("Concurrency") {
		for _, c := range w.Concurrency {
			if c < 1 || c > MaxUsers {
				return Settings{}, sweepErr("Concurrency", "{Concurrency} %d: with {SLO} give levels from 1 to %d (the lowest and highest bound the search)", c, MaxUsers)
			}
		}
		s.Range = fmt.Sprintf("%d:%d", slices.Min(w.Concurrency), slices.Max(w.Concurrency))
	}
	return s, nil
}
