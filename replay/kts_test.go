package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestReqClock: a request's chunks get the kernel stamps of their reads,
// their user-space times kept beside them or summarised; a request any of whose reads
// came without a stamp, or whose stamp lies after its read (a wall clock
// stepped back), keeps user-space times for all its chunks and says why.
func TestReqClock(t *testing.T) {
	e := &engine{start: time.Now().Add(-time.Second), cfg: Config{ChunkUserTimes: true}}
	read := func(k *kstamp, ago time.Duration) { k.last.Store(time.Now().Add(-ago).UnixNano()) }
	record := func(c *reqClock, k *kstamp, stampless int, future bool) *trace.Record {
		rec := &trace.Record{}
		read(k, 300*time.Microsecond)
		rec.Headers = c.now()
		for i := 0; i < 4; i++ {
			switch {
			case i == 2 && stampless > 0:
				k.fail("a read came without a timestamp control message")
			case i == 2 && future:
				read(k, -time.Second)
			default:
				read(k, 200*time.Microsecond)
			}
			t := c.now()
			// two events from one read share its time
			rec.Chunks = append(rec.Chunks, trace.Chunk{T: t}, trace.Chunk{T: t})
		}
		return rec
	}

	// With ChunkUserTimes every chunk keeps its user-space time; either
	// way the record keeps the delays' mean and largest (each read's
	// stamp was taken 200 µs before it returned, so both are at least
	// that), the same numbers a reader computes from kept times.
	for _, keep := range []bool{true, false} {
		e := &engine{start: e.start, cfg: Config{ChunkUserTimes: keep}}
		k := &kstamp{}
		c := &reqClock{e: e, k: k}
		rec := record(c, k, 0, false)
		userHeaders := rec.Headers
		users := make([]int64, len(rec.Chunks))
		for i := range rec.Chunks {
			users[i] = rec.Chunks[i].T
		}
		if note := c.apply(rec); note != "" {
			t.Fatalf("apply: %s", note)
		}
		if rec.Headers >= userHeaders || userHeaders-rec.Headers > int64(time.Second) {
			t.Errorf("headers: kernel %d, user %d", rec.Headers, userHeaders)
		}
		var sum, most int64
		for i, ch := range rec.Chunks {
			if ch.T >= users[i] {
				t.Errorf("chunk %d: kernel %d not before user %d", i, ch.T, users[i])
			}
			if keep && ch.UserT != users[i] || !keep && ch.UserT != 0 {
				t.Errorf("ChunkUserTimes %v: chunk %d kept user time %d (user-space %d)", keep, i, ch.UserT, users[i])
			}
			if i%2 == 1 && ch.T != rec.Chunks[i-1].T {
				t.Errorf("chunks %d and %d of one read got different times", i-1, i)
			}
			sum, most = sum+users[i]-ch.T, max(most, users[i]-ch.T)
		}
		if n := int64(len(rec.Chunks)); rec.UserDelayMean != sum/n || rec.UserDelayMax != most {
			t.Errorf("ChunkUserTimes %v: summary %d/%d; the chunks say %d/%d", keep, rec.UserDelayMean, rec.UserDelayMax, sum/n, most)
		}
		if rec.UserDelayMean < int64(200*time.Microsecond) || rec.UserDelayMax < rec.UserDelayMean {
			t.Errorf("ChunkUserTimes %v: summary %d/%d; want 200µs ≤ mean ≤ largest", keep, rec.UserDelayMean, rec.UserDelayMax)
		}
	}

	for _, tc := range []struct {
		name      string
		stampless int
		future    bool
		want      string
	}{
		{"a stampless read midway", 1, false, "without a timestamp control message"},
		{"a stamp after its read", 0, true, "wall clock stepped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &kstamp{}
			c := &reqClock{e: e, k: k}
			rec := record(c, k, tc.stampless, tc.future)
			before := append([]trace.Chunk{}, rec.Chunks...)
			h := rec.Headers
			note := c.apply(rec)
			if !strings.HasPrefix(note, "user-space timestamps for this request: ") || !strings.Contains(note, tc.want) {
				t.Errorf("note %q; want the fallback and %q", note, tc.want)
			}
			if rec.Headers != h {
				t.Errorf("headers changed to %d from the user-space %d", rec.Headers, h)
			}
			for i := range rec.Chunks {
				if rec.Chunks[i] != before[i] {
					t.Errorf("chunk %d: %+v, want its user-space time %+v untouched (no mixing)", i, rec.Chunks[i], before[i])
				}
			}
		})
	}

	// A time the clock never gave (an adapter's own) is not mapped.
	k := &kstamp{}
	c := &reqClock{e: e, k: k}
	rec := record(c, k, 0, false)
	rec.Chunks[3].T++
	if note := c.apply(rec); !strings.Contains(note, "came from no read") || rec.Chunks[0].UserT != 0 {
		t.Errorf("a foreign chunk time: note %q, chunks %+v", note, rec.Chunks[:2])
	}
}
