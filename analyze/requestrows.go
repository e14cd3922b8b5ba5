package analyze

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// RequestRows returns, for trace cat --requests, the maker of one
// RequestRow per record of the trace at path with header h, its metrics
// computed by definitions. A trace without a label of its own is labelled
// by its file name, as the analysis does; notes hears when the trace's
// tokenizer could not be loaded.
func RequestRows(definitions string) func(path string, h trace.Header, notes io.Writer) (func(*trace.Record) any, error) {
	return func(path string, h trace.Header, notes io.Writer) (func(*trace.Record) any, error) {
		label := ""
		if h.Label == "" {
			label = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".zst"), ".trace")
		}
		l, err := NewRequestLister(label, h, definitions)
		if err != nil {
			return nil, err
		}
		if why := l.TokenizerFallback(); why != "" {
			fmt.Fprintf(notes, "note: %s: the trace's tokenizer could not be loaded (%s); output tokens without server counts are chunk counts (output_tokens_source \"chunks\")\n",
				path, safetext.Show(why))
		}
		return func(rec *trace.Record) any { row := l.Row(rec); return &row }, nil
	}
}
