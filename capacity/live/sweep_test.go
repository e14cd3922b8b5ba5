package live

import (
	"slices"
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
)

// TestSweepStatesTheSearchOrNamesTheSetting: a sweep asked for its
// capacity becomes a concurrency search over the stated levels' span,
// with the stated profile only; what it cannot take is refused naming
// the sweep's setting, in the order a person fixes them.
func TestSweepStatesTheSearchOrNamesTheSetting(t *testing.T) {
	ok := Sweep{SLO: "ttft_p90<=1s", URL: "", Profile: "fast", Concurrency: []int{8, 2, 32}, InputTokens: []int{800},
		MaxTokens: 256, Tokenizer: "o200k_base", Shape: "chat", Results: "results"}
	stated := func(fields ...string) fielderr.Given {
		return func(f string) bool { return slices.Contains(fields, f) }
	}
	for _, c := range []struct {
		name   string
		change func(*Sweep)
		given  fielderr.Given
		field  string // "" when accepted
		want   string // the error, or the search's Range and Profile as "RANGE PROFILE"
	}{
		{"defaults", func(*Sweep) {}, nil, "", " "},
		{"stated levels bound it", func(*Sweep) {}, stated("Concurrency"), "", "2:32 "},
		{"stated profile kept", func(*Sweep) {}, stated("Profile"), "", " fast"},
		{"repeats", func(*Sweep) {}, stated("Repeats", "Definitions"), "Repeats", "live: Sweep: Repeats applies to the sweep, not to SLO: drop one of them"},
		{"definitions", func(*Sweep) {}, stated("Definitions"), "Definitions", "live: Sweep: Definitions applies to the sweep, not to SLO: drop one of them"},
		{"two lengths", func(w *Sweep) { w.InputTokens = []int{100, 800} }, nil, "SLO", "live: Sweep: SLO takes one InputTokens length, not 2"},
		{"empty SLO", func(w *Sweep) { w.SLO = "  " }, nil, "SLO", "live: Sweep: SLO is empty: give the SLO the load must meet, e.g. SLO 'ttft_p90<=1s'"},
		{"bad SLO", func(w *Sweep) { w.SLO = "speed>1" }, nil, "SLO", ""},
		{"level 0", func(w *Sweep) { w.Concurrency = []int{0, 4} }, stated("Concurrency"), "Concurrency",
			"live: Sweep: Concurrency 0: with SLO give levels from 1 to 100000 (the lowest and highest bound the search)"},
		{"level 0 not stated", func(w *Sweep) { w.Concurrency = []int{0} }, nil, "", " "},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ok
			c.change(&w)
			s, err := w.Settings(c.given)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := s.Range + " " + s.Profile; got != c.want {
					t.Errorf("range and profile %q, want %q", got, c.want)
				}
				if s.Axis != AxisConcurrency || s.TimeScale != 1 || s.InputTokens != 800 || s.MaxTokens != 256 || s.Results != "results" || s.SLO != ok.SLO {
					t.Errorf("the search lost the sweep's settings: %+v", s)
				}
				return
			}
			fe := fielderr.As(err)
			if fe == nil || fe.Field != c.field {
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
			if c.want != "" && err.Error() != c.want {
				t.Errorf("got  %q\nwant %q", err, c.want)
			}
			if c.want == "" && err.Error()[:len("live: Sweep: SLO: ")] != "live: Sweep: SLO: " {
				t.Errorf("the SLO's own error is not said as the SLO's: %q", err)
			}
		})
	}
}
