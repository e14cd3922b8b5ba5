package analyze

import (
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

func clockScrape(tMs int64, offNs float64) trace.Scrape {
	return trace.Scrape{T: tMs * msNs, Source: trace.SourceClock, Target: "wall clock - run clock",
		Samples: []trace.Sample{{Name: trace.ClockOffsetSample, Value: offNs}}}
}

// TestClockStep works clock_step out by hand. Readings 10 s apart may
// differ by 1 ms + 500 ppm × 10 s = 6 ms (NTP's slew). A wall clock 4 ms
// ahead at the end is slewed, no step; 20 ms ahead is a step of 20 ms
// between 0 and 10 s. Clock readings are not server scrapes: the trace
// counts none.
func TestClockStep(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      float64
		source   string
		wantStep bool
		wantText string
	}{
		{"slew", 4e6, trace.TimestampsKernel, false, ""},
		{"at the bound", 6e6, trace.TimestampsKernel, false, ""},
		{"step forward, kernel stamps", 20e6, trace.TimestampsKernel, true, "stepped by 20ms against the run clock between 0s and 10s after the start"},
		{"step back, user times", -7e6, trace.TimestampsUser, true, "stepped by -7ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header("A", phase(0, 1, 100, 16, 1))
			h.Timestamps = tc.source
			res := analyzeWithScrapes(t, h, []trace.Record{okRecord("a", 0, 0)},
				[]trace.Scrape{clockScrape(0, 0), clockScrape(10_000, tc.end)})
			w := hasWarning(res.Warnings, WarnClockStep)
			if !tc.wantStep {
				if w != nil {
					t.Fatalf("clock_step on a slew: %+v", w)
				}
				return
			}
			if w == nil || !strings.Contains(w.Message, tc.wantText) {
				t.Fatalf("clock_step: %+v; want %q", w, tc.wantText)
			}
			kernel := strings.Contains(w.Message, "kernel receive stamps")
			if kernel != (tc.source == trace.TimestampsKernel) {
				t.Errorf("message does not fit the timestamp source %s: %s", tc.source, w.Message)
			}
			if n := res.Traces[0].Scrapes; n != 0 {
				t.Errorf("clock readings counted as %d server scrapes", n)
			}
		})
	}
}
