package trace

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// FuzzMerge builds two shard traces from fuzzed identities (start times,
// common starts, lateness, shard indices and counts, the requests each
// holds, models) and merges them. Whatever the headers say, the merge
// never panics and either refuses in one line or writes a trace that
// reads back whole: every record once, each request from one shard once,
// and no shard moved further than the starts' tolerance plus the lateness
// it recorded.
func FuzzMerge(f *testing.F) {
	const ms = int64(time.Millisecond)
	f.Add(int64(0), int64(2*ms), "", int64(0), int64(0), uint16(0), uint16(1), uint16(2), []byte{0, 2}, []byte{1, 3}, false)
	f.Add(int64(ms), int64(3_000*ms), "2026-12-03T10:00:00Z", int64(ms), int64(3_000*ms), uint16(0), uint16(1), uint16(2), []byte{0, 2}, []byte{1, 3}, false)
	f.Add(int64(0), int64(600_000*ms), "", int64(0), int64(0), uint16(0), uint16(1), uint16(2), []byte{0, 2}, []byte{1, 3}, false)
	f.Add(int64(0), int64(0), "", int64(0), int64(0), uint16(0), uint16(1), uint16(2), []byte{0, 2}, []byte{0, 2}, false)
	f.Add(int64(0), int64(0), "", int64(0), int64(0), uint16(0), uint16(1), uint16(2), []byte{0, 2}, []byte{1, 1}, true)
	f.Add(int64(0), int64(-200*365*24*time.Hour), "", int64(0), int64(0), uint16(0), uint16(1), uint16(2), []byte{0}, []byte{1}, false)
	f.Add(int64(0), int64(0), "2026-12-03T10:00:00Z", int64(-5), int64(1<<62), uint16(0), uint16(9999), uint16(10000), []byte{0}, []byte{255}, false)
	base := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, start0, start1 int64, startAt string, late0, late1 int64, idx0, idx1, count uint16, recs0, recs1 []byte, otherModel bool) {
		if len(recs0) > 64 || len(recs1) > 64 {
			return
		}
		dir := t.TempDir()
		write := func(name string, idx uint16, start, late int64, recs []byte, model string) string {
			h := Header{WorkloadDigest: "sha256:aa", Tokenizer: "o200k_base", Shape: "chat", API: "openai-chat", Model: model, Label: "L",
				Phases:    []Phase{{Index: 0, Name: "burst", Kind: "burst", Concurrency: len(recs), Requests: len(recs)}},
				StartWall: base.Add(time.Duration(start)).Format(time.RFC3339Nano), Host: Host{Hostname: "h"},
				Shard: &Shard{Index: int(idx), Count: int(count), StartAt: startAt, StartLateNs: late, Host: "h"}}
			if start < -int64(100*365*24*time.Hour) {
				h.StartWall = "0001-01-01T00:00:00Z"
			}
			p := filepath.Join(dir, name)
			w, err := Create(p, h, WithFlushInterval(0))
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range recs {
				r := Record{ID: fmt.Sprint("r", b), Index: int(b), Warmup: b == 255, Sent: int64(i) * ms, Headers: int64(i)*ms + 1, Done: int64(i+1) * ms, Status: 200,
					Chunks: []Chunk{{T: int64(i)*ms + 2, Bytes: 10, Text: "1"}}}
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return p
		}
		model1 := "m"
		if otherModel {
			model1 = "other"
		}
		a := write("a.trace.zst", idx0, start0, late0, recs0, "m")
		b := write("b.trace.zst", idx1, start1, late1, recs1, model1)
		var out bytes.Buffer
		res, err := Merge(&out, []string{a, b}, MergeOptions{AllowMissing: true, AllowClock: true})
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		r, err := NewReader(&out)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		n := 0
		for r.Scan() {
			rec := r.Record()
			n++
			if rec.Warmup {
				continue
			}
			if seen[rec.Index] {
				t.Fatalf("request %d merged twice", rec.Index)
			}
			seen[rec.Index] = true
		}
		if r.Err() != nil || r.Truncated() || n != len(recs0)+len(recs1) || n != res.Records {
			t.Fatalf("read back %d records (merged %d, given %d+%d): %v", n, res.Records, len(recs0), len(recs1), r.Err())
		}
		// Each shard started within the tolerance of its common start plus
		// its lateness (or of the other shard, without a common start).
		lim := 2*float64(startTolerance) + math.Abs(float64(late0)) + math.Abs(float64(late1))
		for _, s := range r.Header().Shards {
			if s.OffsetNs < 0 || float64(s.OffsetNs) > lim {
				t.Fatalf("shard %d moved by %d ns", s.Index, s.OffsetNs)
			}
		}
	})
}
