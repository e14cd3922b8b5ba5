package claim

import (
	"strings"
	"testing"
)

// TestCountsPrintAsIntegers: a count's measured value and its interval print
// as integers, a rate's keep their decimals.
func TestCountsPrintAsIntegers(t *testing.T) {
	var b strings.Builder
	vs := []Verdict{
		{Text: "requests_ok >= 10", Verdict: Holds, Measured: 16, Lo: 16, Hi: 20, N: 6, Unit: "requests", Reason: "r"},
		{Text: "per_stream_tps >= 10", Verdict: Holds, Measured: 16.25, Lo: 15.5, Hi: 17.75, N: 6, Unit: "tok/s", Reason: "r"},
	}
	if err := RenderVerdicts(&b, vs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "measured 16 requests [16, 20] n=6") {
		t.Errorf("count: %q", lines[0])
	}
	if strings.Contains(lines[1], "[16, 18]") || !strings.Contains(lines[1], "15.5") {
		t.Errorf("rate: %q", lines[1])
	}
}
