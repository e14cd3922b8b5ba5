package selftest

import (
	"fmt"
	"testing"
	"time"
)

// TestSpreadOf checks the median and the lowest–highest spread the table
// shows for every target over several runs, and "-" for one run.
func TestSpreadOf(t *testing.T) {
	held := func(x int64) string { return fmt.Sprintf("%d", x) }
	if m, s := spreadOf([]int64{9000, 10000, 8000}, held, ""); m != 9000 || s != "8000–10000" {
		t.Errorf("held: got %d %q, want 9000 \"8000–10000\"", m, s)
	}
	bytes := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	if m, s := spreadOf([]float64{2.5, 1.25}, bytes, " B"); m != 1.25 || s != "1.25–2.50 B" {
		t.Errorf("bytes: got %g %q, want 1.25 \"1.25–2.50 B\"", m, s)
	}
	if m, s := spreadOf([]float64{3.5}, bytes, " B"); m != 3.5 || s != "-" {
		t.Errorf("one run: got %g %q, want 3.5 \"-\"", m, s)
	}
	if m, s := spreadDur([]time.Duration{300 * us, 100 * us, 200 * us}); m != fmtDur(200*us) || s != fmtDur(100*us)+"–"+fmtDur(300*us) {
		t.Errorf("durations: got %q %q", m, s)
	}
}
