package analyze

import (
	"fmt"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Clock steps. A trace of format 1.4 holds the client's clock readings
// (trace.SourceClock): how far the wall clock had moved against the run's
// monotonic clock, at the start and the end of the run. Kernel receive
// stamps are taken on the wall clock, so a step of it during the run can
// shift the chunk times of the reads that straddled it. NTP may slew the
// wall clock by up to 500 ppm of the time elapsed, which is no step:
// docs/METRICS.md, "clock_step", has the rule.

// WarnClockStep: the wall clock stepped during the run.
const WarnClockStep = "clock_step"

const (
	// clockSlewPPM is the most NTP slews a clock (adjtimex's limit).
	clockSlewPPM = 500
	// clockStepFloorNs is what two clock readings may differ by before
	// a change is more than the readings' own noise.
	clockStepFloorNs = 1_000_000
)

// clockReadings are a trace's clock readings, kept by AddScrape.
type clockReadings struct {
	n      int
	t, off int64 // the latest reading
}

// addClock takes one clock reading and notes the largest step between
// consecutive readings.
func (t *TraceAcc) addClock(s *trace.Scrape) {
	var off int64
	found := false
	for _, smp := range s.Samples {
		if smp.Name == trace.ClockOffsetSample && smp.Value == smp.Value && smp.Value > -9e18 && smp.Value < 9e18 {
			off, found = int64(smp.Value), true
		}
	}
	if !found || s.Error != "" {
		return
	}
	c := &t.clock
	if c.n > 0 {
		step := off - c.off
		allow := clockStepFloorNs + max(s.T-c.t, 0)/1_000_000*clockSlewPPM
		if abs64(step) > allow && abs64(step) > abs64(t.info.ClockStepNs) {
			t.info.ClockStepNs = step
			t.info.ClockStepFrom, t.info.ClockStepTo = c.t, s.T
		}
	}
	c.n++
	c.t, c.off = s.T, off
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// clockStepWarning says a trace's wall clock stepped during its run.
func clockStepWarning(t *TraceAcc, lk map[string]any) []Warning {
	if t.info.ClockStepNs == 0 {
		return nil
	}
	what := "the trace's chunk times are user-space times on the monotonic clock and are not affected; its start time (start_wall) is"
	if t.header.Timestamps == trace.TimestampsKernel {
		what = "chunk times are kernel receive stamps taken on that clock: a read that straddled the step is off by up to the step (one whose stamp fell after its read, or an hour before it, fell back to user-space times and says so in its notes)"
	}
	return []Warning{{Code: WarnClockStep, Keys: lk,
		Message: fmt.Sprintf("the wall clock stepped by %v against the run clock between %v and %v after the start (more than NTP's slew of %d ppm explains): %s",
			time.Duration(t.info.ClockStepNs), time.Duration(t.info.ClockStepFrom).Round(time.Millisecond), time.Duration(t.info.ClockStepTo).Round(time.Millisecond), clockSlewPPM, what),
		Evidence: map[string]any{"step_ns": t.info.ClockStepNs, "from_ns": t.info.ClockStepFrom, "to_ns": t.info.ClockStepTo, "timestamps": t.header.Timestamps}}}
}
