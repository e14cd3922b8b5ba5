package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestReqClock: a request's chunks get the kernel stamps of their reads,
// their user-space times kept beside them; a request any of whose reads
// came without a stamp, or whose stamp lies after its read (a wall clock
// stepped back), keeps user-space times for all its chunks and says why.
func TestReqClock(t *testing.T) {
	e := &engine{start: time.Now().Add(-time.Second)}
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

	k := &kstamp{}
	c := &reqClock{e: e, k: k}
	rec := record(c, k, 0, false)
	userHeaders := rec.Headers
	if note := c.apply(rec); note != "" {
		t.Fatalf("apply: %s", note)
	}
	if rec.Headers >= userHeaders || userHeaders-rec.Headers > int64(time.Second) {
		t.Errorf("headers: kernel %d, user %d", rec.Headers, userHeaders)
	}
	for i, ch := range rec.Chunks {
		if ch.UserT == 0 || ch.T >= ch.UserT {
			t.Errorf("chunk %d: kernel %d not before user %d", i, ch.T, ch.UserT)
		}
		if i%2 == 1 && (ch.T != rec.Chunks[i-1].T || ch.UserT != rec.Chunks[i-1].UserT) {
			t.Errorf("chunks %d and %d of one read got different times", i-1, i)
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
	k = &kstamp{}
	c = &reqClock{e: e, k: k}
	rec = record(c, k, 0, false)
	rec.Chunks[3].T++
	if note := c.apply(rec); !strings.Contains(note, "came from no read") || rec.Chunks[0].UserT != 0 {
		t.Errorf("a foreign chunk time: note %q, chunks %+v", note, rec.Chunks[:2])
	}
}
