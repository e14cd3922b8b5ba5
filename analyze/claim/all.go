package claim

import (
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
)

// CheckAll judges every claim (Check) and counts the verdicts that do
// not hold and the inconclusive ones, which decide check's exit status.
func CheckAll(res *analyze.Result, cs []Claim, o CheckOptions) (vs []Verdict, fails, unsure int) {
	for _, c := range cs {
		v := Check(res, c, o)
		switch v.Verdict {
		case DoesNotHold:
			fails++
		case Inconclusive:
			unsure++
		}
		vs = append(vs, v)
	}
	return vs, fails, unsure
}

// Cells are the verdict as a table's row shows it, in the words
// RenderVerdicts prints: the verdict in capitals, what was measured (the
// value with its unit, interval and sample count) and why (the reason,
// then any warnings).
func (v Verdict) Cells() (verdict, measured, why string) {
	var b strings.Builder
	RenderVerdicts(&b, []Verdict{v})
	line := strings.TrimSpace(b.String())
	why = v.Reason
	if _, rest, ok := strings.Cut(line, " — measured "); ok {
		measured = rest
		if i := strings.Index(rest, " ("); i >= 0 {
			measured = rest[:i]
		}
	}
	if len(v.Warnings) > 0 {
		why += "; warnings: " + strings.Join(v.Warnings, ", ")
	}
	return strings.ToUpper(v.Verdict), measured, why
}
