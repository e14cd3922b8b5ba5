package selftest

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// Section 3 by timestamp source. Where chunk times are the kernel's
// receive stamps (replay's default on Linux), each chunk also keeps the
// user-space time of the same read (trace.Chunk.UserT), so one run gives
// the timestamp error of both sources on the very same events: the
// difference is the client's own delay between a segment's arrival and
// the parser seeing it, which is what kernel stamps take out.

// StampSource is section 3's error at one concurrency for one source.
type StampSource struct {
	Source        string // trace.TimestampsKernel or trace.TimestampsUser
	Chunks        int
	P50, P99, Max time.Duration
}

// stampSources computes the error (arrival minus the simulator's send
// time) by source from one run's records: the kernel stamps and the
// user-space times of the chunks that have both, and how many requests
// fell back to user-space times (their chunks count under user only).
func stampSources(recs []*trace.Record) (sources []StampSource, fellBack int) {
	var kernel, user []int64
	for _, r := range recs {
		if strings.Contains(r.Notes, "user-space timestamps for this request") {
			fellBack++ // replay's note (replay/kts.go)
		}
		for _, c := range r.Chunks {
			if c.ServerT == 0 {
				continue
			}
			if c.UserT != 0 {
				kernel = append(kernel, c.T-c.ServerT)
				user = append(user, c.UserT-c.ServerT)
			} else {
				user = append(user, c.T-c.ServerT)
			}
		}
	}
	for _, s := range []struct {
		name string
		d    []int64
	}{{trace.TimestampsKernel, kernel}, {trace.TimestampsUser, user}} {
		if len(s.d) == 0 {
			continue
		}
		p50, p99, mx := quantiles(s.d)
		sources = append(sources, StampSource{Source: s.name, Chunks: len(s.d), P50: p50, P99: p99, Max: mx})
	}
	return sources, fellBack
}

// writeStampSources prints section 3's errors by source, when the run had
// kernel stamps.
func writeStampSources(w io.Writer, rows []StampRow) {
	any := false
	for _, s := range rows {
		any = any || len(s.Sources) > 1
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\nby timestamp source, the same events (kernel: the kernel's receive stamp of the read; user: when the read returned to the client):")
	fmt.Fprintln(w, "streams\tsource\tchunks\tp50\tp99\tmax\t")
	for _, s := range rows {
		for _, src := range s.Sources {
			fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%s\t%s\t\n", s.Streams, src.Source, src.Chunks, fmtDur(src.P50), fmtDur(src.P99), fmtDur(src.Max))
		}
		if s.FellBack > 0 {
			fmt.Fprintf(w, "%d\t(%d requests fell back to user-space times)\t\t\t\t\t\n", s.Streams, s.FellBack)
		}
	}
}
