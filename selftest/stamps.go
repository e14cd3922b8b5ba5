package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Section 3: the timestamp error, a chunk's arrival time in the trace
// minus the simulator's send time, at every level over plain HTTP and
// again over TLS (both to loopback), as the targets ask.
//
// The aligned levels (StampStreams) are bursts: every stream released at
// once, so their paced tokens arrive together, as a real engine's decode
// step emits one token for every stream. The wide level (StampWide,
// 10,000 streams) is opened at StampWideRate per second instead, for the
// reason section 2 gives (10,000 connections released together swamp the
// simulator's accept loop and it resets the ones it has not read within
// 10 s, which measures the server's connection storm), and paced slower
// (1 s, section 2's pace) so that client and simulator together stay
// within two cores (10,000 streams at 20 ms would be 500,000 writes and
// reads a second). At 500 ms the TLS level's chunks alone took 1.7 of the
// two cores, and the last seconds of its opening, 1,000 handshakes a
// second on top, saturated the machine: 1.2–1.7 % of the chunks read a
// pace late in seconds 8–11, which measured the overload, not the stamps
// (docs/PERFORMANCE.md, "The burst's start and the wide level's opening").
// Each stream lasts long enough that all are open together for a while
// after the last opened (the row's Peak says whether they were); their
// tokens are then spread evenly over the pace rather than aligned.

// Transport names of section 3's rows.
const (
	TransportPlain = "loopback"
	TransportTLS   = "TLS"
)

// Transport is TransportTLS or TransportPlain.
func (r StampRow) Transport() string {
	if r.TLS {
		return TransportTLS
	}
	return TransportPlain
}

// stampLevel is one section-3 replay.
type stampLevel struct {
	streams  int
	openRate float64 // 0: a burst
	pace     time.Duration
	tokens   int
}

func (p Plan) stampLevels() []stampLevel {
	var ls []stampLevel
	for _, n := range p.StampStreams {
		ls = append(ls, stampLevel{streams: n, pace: p.StampPace, tokens: p.StampTokens})
	}
	if p.StampWide > 0 {
		ls = append(ls, stampLevel{streams: p.StampWide, openRate: p.StampWideRate, pace: p.StampWidePace, tokens: p.StampWideTokens})
	}
	return ls
}

// stamp is section 3: received time minus the simulator's send time.
func (h *harness) stamp(ctx context.Context) error {
	p := h.plan
	transports := []bool{false}
	if p.StampTLS {
		transports = append(transports, true)
	}
	defer func() { h.conn = connOpts{} }()
	for _, l := range p.stampLevels() {
		for _, useTLS := range transports {
			// A burst's connections are opened before it (replay's
			// --prewarm): without, 1,024 TLS handshakes at once spread the
			// streams' starts over more than their 2 s on a loaded 2-core
			// machine (472 of 1,024 open together), and the tokens were
			// no longer aligned. The wide level opens its connections
			// one by one as its streams start.
			//
			// A burst's first tokens wait StampFirstToken (the server's
			// prefill): otherwise the first streams' tokens arrive while
			// the client is still sending the last requests and the
			// simulator still reading them, and the client reads a few
			// hundred first tokens a pace late for reasons of the send,
			// not of the stamps (docs/PERFORMANCE.md, "The burst's start and the
			// wide level's opening").
			h.conn = connOpts{tls: useTLS, prewarm: l.openRate == 0, userTimes: true}
			if l.openRate == 0 {
				h.conn.firstToken = p.StampFirstToken
			}
			row := StampRow{Run: h.run, Streams: l.streams, TLS: useTLS, OpenRate: l.openRate, Pace: l.pace, FirstToken: h.conn.firstToken}
			bc := workload.BuildConfig{MaxTokens: l.tokens, Schedule: fmt.Sprintf("burst:%d", l.streams), Repeats: 1}
			opened := "at once"
			if l.openRate > 0 {
				bc = workload.BuildConfig{MaxTokens: l.tokens, Schedule: fmt.Sprintf("rate:%g", l.openRate), Arrival: "constant", Requests: l.streams}
				opened = fmt.Sprintf("%g/s", l.openRate)
			}
			if row.FirstToken > 0 {
				opened += fmt.Sprintf(", first tokens %v after each request", row.FirstToken)
			}
			h.logf("3. timestamp error, %s: %d streams opened %s × %d tokens paced %v", row.Transport(), l.streams, opened, l.tokens, l.pace)
			var srv0, srv1 time.Duration
			name := fmt.Sprintf("stamp-%d", l.streams)
			if useTLS {
				name += "-tls"
			}
			out, err := h.replayRun(ctx, name, bc, l.pace, true, childCPU(&srv0, &srv1))
			if err != nil {
				return err
			}
			var d []int64
			for _, r := range out.records {
				for _, c := range r.Chunks {
					if c.ServerT != 0 {
						d = append(d, c.T-c.ServerT)
					}
				}
			}
			if len(d) == 0 {
				return errors.New("no chunk carried the simulator's send time: is the child running with -send-times?")
			}
			row.P50, row.P99, row.Max = quantiles(d)
			row.Chunks, row.Failed = len(d), failed(out.records)
			row.Peak = holdRow(len(out.records), out.records).Peak
			row.ClientCPU, row.ClientSys, row.ServerCPU, row.Wall = out.cpu, out.sys, srv1-srv0, out.wall
			row.Sources, row.FellBack = stampSources(out.records)
			row.ReadLate, row.Marked, row.Unmarked = readLate(out.records, l.pace)
			row.EndAfterLast = endAfterLast(out.records)
			h.res.Stamp = append(h.res.Stamp, row)
			h.logf("   → p50 %v p99 %v max %v, peak %d open, %d chunks read late by the send stamps, %d of them not marked in the trace (%d marked); end − last chunk p99 %v",
				row.P50, row.P99, row.Max, row.Peak, row.ReadLate, row.Unmarked, row.Marked, row.EndAfterLast)
		}
	}
	return nil
}

// readLate counts, against the simulator's send stamps, the chunks the
// client read late: a chunk whose recorded time is no earlier than the
// send of its stream's next chunk, when that next chunk was sent at least
// half a pace after it (a real token step, not a writer catching up). A
// chunk so recorded carries a later segment's arrival: the client had not
// read it when its stream's next token arrived (a read's kernel stamp is
// that of the last segment it copied, and TCP merges queued segments,
// keeping the latest stamp), so its error is about a pace or more, and it
// is the client's delay, not the clock's: at 1,024 aligned streams paced
// 20 ms the tail beyond the 0.5 ms target was nearly all such chunks
// (docs/PERFORMANCE.md, "Why the tail at 1,024 streams"). The trace marks
// the chunks it knows were read late (trace.Chunk.ReadLate): unmarked
// counts those late here that it did not mark, which analyze would take
// at their recorded time; marked counts every mark.
func readLate(recs []*trace.Record, pace time.Duration) (late, marked, unmarked int) {
	for _, r := range recs {
		cs := r.Chunks
		for i := range cs {
			if cs[i].ReadLate {
				marked++
			}
			if i+1 == len(cs) || cs[i].ServerT == 0 || cs[i+1].ServerT == 0 || !cs[i].Content() {
				continue
			}
			if next := cs[i+1].ServerT; next-cs[i].ServerT >= int64(pace/2) && cs[i].T >= next {
				late++
				if !cs[i].ReadLate {
					unmarked++
				}
			}
		}
	}
	return late, marked, unmarked
}

// endAfterLast is the p99 over the successful requests of their end
// (done) minus their last chunk: on one clock, the time between the read
// that brought the last chunk and the one that brought the stream's end,
// which on the simulator come together (0 when one read brought both).
func endAfterLast(recs []*trace.Record) time.Duration {
	var d []int64
	for _, r := range recs {
		if n := len(r.Chunks); r.OK() && n > 0 {
			d = append(d, r.Done-r.Chunks[n-1].T)
		}
	}
	if len(d) == 0 {
		return 0
	}
	_, p99, _ := quantiles(d)
	return p99
}

// By timestamp source. Where chunk times are the kernel's
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
	fmt.Fprintln(w, "\nby timestamp source, the same events (kernel: the kernel's receive stamp of the read, under TLS of the read that completed the record; user: when the read returned to the client):")
	fmt.Fprintln(w, "run\ttransport\tstreams\tsource\tchunks\tp50\tp99\tmax\t")
	for _, s := range rows {
		for _, src := range s.Sources {
			fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t\n", s.Run, s.Transport(), s.Streams, src.Source, src.Chunks, fmtDur(src.P50), fmtDur(src.P99), fmtDur(src.Max))
		}
		if s.FellBack > 0 {
			fmt.Fprintf(w, "%d\t%s\t%d\t(%d requests fell back to user-space times)\t\t\t\t\t\n", s.Run, s.Transport(), s.Streams, s.FellBack)
		}
	}
}

// readLateShare prints n of chunks as a count and a share.
func readLateShare(n, chunks int) string {
	if chunks == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%.2f%%)", n, 100*float64(n)/float64(chunks))
}
