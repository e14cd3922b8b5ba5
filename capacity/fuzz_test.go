package capacity

import (
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// FuzzParseSLO: any text gives an SLO whose terms are usable (a positive
// bound, a quantile in (0, 1) or a share in (0, 1)) or a one-line error.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft_p90<=1s", "ttft_p90<=2s,tpot_p90<50ms", "goodput>=95%", "e2e_p99<=800", "goodput>=100%", "ttft_p90<=5tok/s", "itl_p90<=1ms", ",", "goodput>=", "ttft_p0<=1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		for _, tm := range slo {
			if !(tm.Bound > 0) {
				t.Errorf("%q: bound %g", s, tm.Bound)
			}
			if tm.Share && !(tm.Bound < 1) {
				t.Errorf("%q: share %g", s, tm.Bound)
			}
			if !tm.Share && !(tm.Q > 0 && tm.Q < 1) {
				t.Errorf("%q: quantile %g", s, tm.Q)
			}
		}
	})
}
