package analyze

import (
	"strings"
	"testing"
)

// TestTimeScaleSaid: a capacity search's trace of the simulator at time
// scale 0.1 says so (its header option capacity_time_scale): in the trace
// info (JSON sim_time_scale) and as a warning, which every table, the
// report and csv's stderr show beside the numbers it scales (0.1: latencies
// 0.1×, speeds 10×). A trace at the profile's pace, or of a real server,
// says nothing.
func TestTimeScaleSaid(t *testing.T) {
	tt := roleStream()
	tt.h.Simulated, tt.h.SimProfile = true, "llamacpp-rtx5090-q4km"
	tt.h.Options = map[string]string{"capacity_time_scale": "0.1"}
	res := analyzeTraces(t, Options{}, tt)
	if res.Traces[0].SimTimeScale != 0.1 {
		t.Errorf("sim_time_scale = %v, want 0.1", res.Traces[0].SimTimeScale)
	}
	w := hasWarning(res.Warnings, WarnTimeScaled)
	if w == nil || !strings.Contains(w.Message, "time scale 0.1: every duration is 0.1× the profile's, so these latencies read 0.1× and these speeds 10×") ||
		!strings.Contains(w.Message, "profile llamacpp-rtx5090-q4km") {
		t.Fatalf("warning %+v", w)
	}
	for _, opts := range []map[string]string{{"capacity_time_scale": "1"}, nil} {
		tt.h.Options = opts
		if hasWarning(analyzeTraces(t, Options{}, tt).Warnings, WarnTimeScaled) != nil {
			t.Errorf("options %v: warned", opts)
		}
	}
	tt.h.Simulated, tt.h.Options = false, map[string]string{"capacity_time_scale": "0.1"}
	if hasWarning(analyzeTraces(t, Options{}, tt).Warnings, WarnTimeScaled) != nil {
		t.Error("a real server's trace: warned")
	}
}
