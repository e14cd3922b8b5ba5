package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/llmreplay/llmreplay/analyze"
)

// WriteMetricList writes every metric with its unit, its statistics and
// its definition, then the definition sets (analyze --list-metrics).
func WriteMetricList(w io.Writer) error {
	for _, m := range analyze.Metrics {
		var names []string
		for _, s := range m.Stats() {
			if s != "" {
				names = append(names, "_"+s)
			}
		}
		if m.HasPercentiles() {
			names = append(names, "any _pX")
		}
		suffix := ""
		if len(names) > 0 {
			suffix = " (" + strings.Join(names, " ") + ")"
		}
		if _, err := fmt.Fprintf(w, "%s [%s]%s\n    %s\n", m.Name, m.Unit, suffix, m.Doc); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\ndefinition sets (--definitions): %s\n", strings.Join(analyze.DefinitionNames(), ", "))
	return err
}

// MetricNames are every metric column a table takes: each metric with
// each of its statistics ("ttft_p50"), or alone when it has none.
func MetricNames() []string {
	var names []string
	for _, m := range analyze.Metrics {
		for _, st := range m.Stats() {
			if st == "" {
				names = append(names, m.Name)
			} else {
				names = append(names, m.Name+"_"+st)
			}
		}
	}
	return names
}
