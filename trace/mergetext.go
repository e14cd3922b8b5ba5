package trace

import (
	"fmt"
	"io"
	"time"
)

// WriteText says what a merge into out did, for people: its warnings, the
// shards and records merged, the shards left out, and how far the merged
// clock can be trusted.
func (r *MergeResult) WriteText(w io.Writer, out string) {
	for _, s := range r.Warnings {
		fmt.Fprintln(w, "warning:", s)
	}
	n, s := len(r.Header.Shards), "s"
	if n == 1 {
		s = ""
	}
	fmt.Fprintf(w, "merged %d shard%s of %d (%d records) into %s\n", n, s, r.Header.Shards[0].Count, r.Records, out)
	if len(r.Header.ShardsMissing) > 0 {
		fmt.Fprintf(w, "missing shards: %v (merged without them: --allow-missing)\n", r.Header.ShardsMissing)
	}
	fmt.Fprintf(w, "clock alignment: %s\n", r.Alignment())
}

// Alignment says how far the merged clock can be trusted.
func (r *MergeResult) Alignment() string {
	switch {
	case r.AlignUnknown:
		return "unknown (a shard's clock gave no error estimate): aggregate tok/s and phase windows across hosts may be off by the clocks' disagreement"
	case r.AlignErrorNs == 0:
		return "exact (every shard ran on one host, one clock)"
	default:
		return fmt.Sprintf("worst case ±%v between hosts (affects phase windows and aggregate tok/s, not per-request metrics)", time.Duration(r.AlignErrorNs))
	}
}
