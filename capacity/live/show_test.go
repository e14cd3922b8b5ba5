package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/capacity"
)

// busyText is how the answer says the built-in simulator fell behind its
// model.
const busyText = "warning: the simulator ran behind its model"

// TestSimBusyWarning: the rule on hand-made lags. The warning comes when
// the simulator's mean step lag passes 5 % of the tightest time bound of
// the SLO as run (goodput shares have no time), and says the lag, its
// share and the bound.
func TestSimBusyWarning(t *testing.T) {
	slo := capacity.SLO{{Metric: "ttft", Q: 0.9, Bound: 100}, {Metric: "tpot", Q: 0.9, Bound: 400}, {Metric: "goodput", Bound: 0.95, Share: true}}
	for _, c := range []struct {
		lag  time.Duration
		slo  capacity.SLO
		want string // "" for no warning
	}{
		{0, slo, ""},
		{4 * time.Millisecond, slo, ""},
		{5 * time.Millisecond, slo, ""}, // 5 % exactly: within
		{6 * time.Millisecond, slo, "6ms late on average, 6% of the tightest SLO bound (100ms as run)"},
		{30 * time.Millisecond, capacity.SLO{{Metric: "e2e", Q: 0.5, Bound: 2000}}, ""},
		{150 * time.Millisecond, capacity.SLO{{Metric: "e2e", Q: 0.5, Bound: 2000}}, "150ms late on average, 8% of the tightest SLO bound (2s as run)"},
		{time.Second, capacity.SLO{{Metric: "goodput", Bound: 0.95, Share: true}}, ""},
	} {
		got := busyWarning(c.lag, c.slo)
		switch {
		case c.want == "" && got != "":
			t.Errorf("lag %v, SLO %v: warned %q", c.lag, c.slo, got)
		case c.want != "" && (!strings.HasPrefix(got, busyText) || !strings.Contains(got, c.want)):
			t.Errorf("lag %v: got %q, want it to start %q and hold %q", c.lag, got, busyText, c.want)
		}
	}
}
