package render

import (
	"fmt"
	"io"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/outfile"
)

// WriteTraceSummary writes to w the summary analyze prints for the trace
// a run just wrote at path, read back from the file; a trace it cannot
// analyse is said on notes, since the run itself went well. A device
// (-o /dev/stdout) holds the trace itself and is not read back.
func WriteTraceSummary(w, notes io.Writer, path string) error {
	if !outfile.Regular(path) {
		return nil
	}
	res, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: path})
	if err != nil {
		fmt.Fprintf(notes, "no summary: %v (llmreplay analyze %s says more)\n", err, path)
		return nil
	}
	return RenderSummaryText(w, BuildSummary(res, SummaryOptions{}))
}
