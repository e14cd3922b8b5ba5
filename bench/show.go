package bench

import (
	"fmt"
	"io"

	"github.com/llmreplay/llmreplay/internal/safetext"
)

// WriteText writes the server measured and the summary (the wide
// sweep table with wide), as bench prints them; WriteFiles names the files
// the run wrote.
func (r *Result) WriteText(w io.Writer, wide bool) {
	if r.Simulated {
		fmt.Fprintf(w, "server: SIMULATED (profile %s)\n", r.Profile)
	} else {
		fmt.Fprintf(w, "server: %s (model %s)\n", r.URL, safetext.Show(r.Summary.Model))
	}
	if wide {
		fmt.Fprint(w, r.Table)
	} else {
		fmt.Fprint(w, r.Compact)
	}
}

// WriteFiles writes the run's summary and the paths of the trace, the
// Markdown table, the JSON analysis and the HTML report, one a line.
func (r *Result) WriteFiles(w io.Writer) {
	r.Summary.WriteText(w)
	fmt.Fprintf(w, "table: %s\njson:  %s\nreport: %s\n", r.TableFile, r.JSONFile, r.ReportFile)
}
