package render

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/llmreplay/llmreplay/analyze"
)

var thousands = message.NewPrinter(language.English)

// scalingNotes are the footnotes saying how TTFT and prefill speed scale
// with input length, one per label and concurrency that ran two input
// lengths or more (analyze.Result.PrefillScaling), and none otherwise.
func scalingNotes(res *analyze.Result) []string {
	type key struct {
		label string
		c     int
		rate  float64
	}
	var order []key
	by := map[key][]analyze.Scaling{}
	for _, s := range res.PrefillScaling() {
		k := key{s.Label, s.Concurrency, s.Rate}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	if len(order) == 0 {
		return nil
	}
	var out []string
	anySteepest := false
	for _, k := range order {
		ss := by[k]
		in := ss[0].InputTokens
		var parts []string
		for _, s := range ss {
			name := "TTFT"
			if s.Metric == "prefill_tps" {
				name = "prefill tok/s"
			}
			parts = append(parts, fmt.Sprintf("%s ∝ input^%s [%s, %s]", name, exponent(s.Exponent.Value), exponent(s.Exponent.Lo), exponent(s.Exponent.Hi)))
			if st := s.Steepest; st != nil {
				anySteepest = true
				in := st.InputTokens
				parts[len(parts)-1] += fmt.Sprintf(" (steepest, %s–%s tokens: input^%s [%s, %s])", thousands.Sprintf("%d", in[0]), thousands.Sprintf("%d", in[len(in)-1]),
					exponent(st.Exponent.Value), exponent(st.Exponent.Lo), exponent(st.Exponent.Hi))
			}
		}
		load := fmt.Sprintf("concurrency %d", k.c)
		if k.rate > 0 {
			load = fmt.Sprintf("rate %g req/s", k.rate)
		}
		out = append(out, fmt.Sprintf("prefill scaling, %s at %s, input %s–%s tokens (%d requests): %s",
			k.label, load, thousands.Sprintf("%d", in[0]), thousands.Sprintf("%d", in[len(in)-1]), ss[0].Exponent.N, strings.Join(parts, "; ")))
	}
	legend := "prefill scaling: the exponent k of a least-squares fit of ln(metric) on ln(input tokens) over every successful request, [95% interval]; TTFT's k is 1 for prefill linear in the prompt, 2 for quadratic"
	if anySteepest {
		legend += "; steepest: the same fit over the consecutive lengths spanning 10× or more where TTFT grows fastest"
	}
	return append(out, legend+" (docs/METRICS.md)")
}

func exponent(x float64) string {
	switch {
	case math.IsInf(x, -1):
		return "−∞"
	case math.IsInf(x, 1):
		return "+∞"
	case math.IsNaN(x):
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}
