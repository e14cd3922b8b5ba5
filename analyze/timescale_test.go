package analyze

import (
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
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

// TestTimeScaleFromTheSimulatorsMetrics: a trace of a separately started
// simulator (`llmreplay sim --time-scale 0.1`, then replay) has no header
// option for its scale, but its /metrics scrapes hold the simulator's
// llmreplay_sim_time_scale gauge: the trace is then read as scaled, named
// by the profile in the gauge's label. A gauge of 1, an absurd one, or one
// of another server's name says nothing.
func TestTimeScaleFromTheSimulatorsMetrics(t *testing.T) {
	scrape := func(name, labels string, v float64) *trace.Scrape {
		return &trace.Scrape{Source: trace.SourceMetrics, T: 1, Target: "http://127.0.0.1:1/metrics",
			Samples: []trace.Sample{{Name: "llmreplay_sim_num_requests_running", Labels: labels, Value: 0}, {Name: name, Labels: labels, Value: v}}}
	}
	for _, c := range []struct {
		name    string
		s       *trace.Scrape
		want    float64
		profile string
	}{
		{"scaled", scrape("llmreplay_sim_time_scale", `profile="vllm-rtx5090-bf16"`, 0.1), 0.1, "vllm-rtx5090-bf16"},
		{"the profile's pace", scrape("llmreplay_sim_time_scale", `profile="fast"`, 1), 0, ""},
		{"absurd", scrape("llmreplay_sim_time_scale", `profile="fast"`, 1e308), 0, ""},
		{"negative", scrape("llmreplay_sim_time_scale", `profile="fast"`, -0.1), 0, ""},
		{"another name", scrape("vllm:time_scale", `profile="fast"`, 0.1), 0, ""},
	} {
		a, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		tt := roleStream()
		acc := a.Trace(tt.label, "", tt.h)
		acc.AddScrape(c.s)
		tracetest.AddAll(acc, tt.records)
		res := a.Result()
		info := res.Traces[0]
		if info.SimTimeScale != c.want || info.SimProfile != c.profile || info.Simulated != (c.want != 0) {
			t.Errorf("%s: scale %v, profile %q, simulated %v; want %v, %q", c.name, info.SimTimeScale, info.SimProfile, info.Simulated, c.want, c.profile)
		}
		if w := hasWarning(res.Warnings, WarnTimeScaled); (w != nil) != (c.want != 0) {
			t.Errorf("%s: time_scaled warning %+v", c.name, w)
		}
	}
}
