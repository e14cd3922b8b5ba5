package inspect

import (
	"encoding/json"
	"fmt"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
)

// recordNoChunks is a record as cat --no-chunks prints it: the chunks key
// is left out (the outer field hides the embedded one) and their number
// given instead.
type recordNoChunks struct {
	*trace.Record
	Chunks     *struct{} `json:"chunks,omitempty"`
	ChunkCount int       `json:"chunk_count"`
}

var (
	emptyChunks  = []trace.Chunk{}
	emptySamples = []trace.Sample{}
)

// Records encodes every record of r, one JSON object each, with its
// chunks ([] when it has none, so jq's .chunks[] just works) or, with
// noChunks, their number as chunk_count. The error is enc's; r.Err says
// how the scan ended.
func Records(enc *json.Encoder, r *trace.Reader, noChunks bool) error {
	for r.Scan() {
		rec := r.Record()
		var v any = rec
		if noChunks {
			v = recordNoChunks{Record: rec, ChunkCount: len(rec.Chunks)}
		} else if rec.Chunks == nil {
			rec.Chunks = emptyChunks
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// Scrapes encodes every scrape of a server's /metrics or of a watched
// process in r (trace 1.3), one JSON object each. The client's own clock
// readings (1.4) are not metrics: Info sums them up, with the step check.
func Scrapes(enc *json.Encoder, r *trace.Reader) error {
	r.IncludeScrapes()
	for r.Scan() {
		s := r.Scrape()
		if s == nil || s.Source == trace.SourceClock {
			continue
		}
		if s.Samples == nil {
			s.Samples = emptySamples
		}
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// Notes are what a person should hear after a scan of r (read from
// path) ended: a cut-short tail (a killed run leaves one), and entries
// that could not be read and were skipped.
func Notes(path string, r *trace.Reader) []string {
	var notes []string
	if r.Truncated() {
		notes = append(notes, fmt.Sprintf("note: %s ends in a cut-short tail (the run was killed, or is still running); every record before it was read", path))
	}
	if n, first := r.Skipped(); n > 0 {
		notes = append(notes, fmt.Sprintf("note: %s is damaged: %s could not be read and skipped (the first: %s); every other record was read",
			path, Entries(n), safetext.Show(first.Error())))
	}
	return notes
}
