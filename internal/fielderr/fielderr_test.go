package fielderr

import (
	"errors"
	"fmt"
	"testing"
)

// TestRenameSaysTheCallersWords: a field error reads in the library's
// field names for a Go caller and in the caller's words (flags) once
// renamed, the sentence otherwise the same, whether the setting leads it,
// sits inside it, or several settings are named.
func TestRenameSaysTheCallersWords(t *testing.T) {
	names := map[string]string{"Range": "--range", "SLO": "--slo", "MaxRequests": "--max-requests", "MaxDuration": "--max-duration", "Schedule": "--schedule"}
	cases := []struct {
		err          error
		goText, flag string
	}{
		{New("workload: BuildConfig", "Schedule", `"storm:3" is unknown`, "use burst"),
			`workload: BuildConfig.Schedule "storm:3" is unknown: use burst`, `--schedule "storm:3" is unknown: use burst`},
		{Newf("live: Settings", "Range", "{Range} %q: write LOW:HIGH, e.g. {Range} 1:64", "x"),
			`live: Settings: Range "x": write LOW:HIGH, e.g. Range 1:64`, `--range "x": write LOW:HIGH, e.g. --range 1:64`},
		{Newf("live: Settings", "SLO", "no {SLO}: give one, e.g. {SLO} 'ttft_p90<=1s'"),
			"live: Settings: no SLO: give one, e.g. SLO 'ttft_p90<=1s'", "no --slo: give one, e.g. --slo 'ttft_p90<=1s'"},
		{Newf("live: Settings", "MaxRequests", "{MaxRequests} and {MaxDuration}: give 0 or more"),
			"live: Settings: MaxRequests and MaxDuration: give 0 or more", "--max-requests and --max-duration: give 0 or more"},
		// A value is never read as a setting's name, nor as a verb.
		{Newf("live: Settings", "Range", "{Range} %q: %s", "{SLO}", "100%"),
			`live: Settings: Range "{SLO}": 100%`, `--range "{SLO}": 100%`},
		// A setting the caller has no word for keeps its field's name.
		{Newf("live: Settings", "Range", "{Range} needs {Axis}"), "live: Settings: Range needs Axis", "--range needs Axis"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.goText {
			t.Errorf("Error() = %q, want %q", got, c.goText)
		}
		out, ok := Rename(fmt.Errorf("wrapped: %w", c.err), names)
		if !ok || out.Error() != c.flag {
			t.Errorf("Rename = %q, %v; want %q", out, ok, c.flag)
		}
	}
	if _, ok := Rename(Newf("s", "Other", "{Other} bad"), names); ok {
		t.Error("renamed an error whose own field has no name")
	}
	if _, ok := Rename(errors.New("plain"), names); ok {
		t.Error("renamed a plain error")
	}
}
