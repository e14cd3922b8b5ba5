package selftest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// TestStampSources works section 3's by-source errors out by hand. Request
// a kept its kernel stamps: errors 10 and 30 µs (kernel), 110 and 530 µs
// (user). Request b fell back: its 700 µs counts under user only. A chunk
// without the simulator's send time counts nowhere. Nearest rank over
// sorted errors: kernel p50 10 µs, p99 and max 30 µs; user (110, 530,
// 700 µs) p50 530 µs, p99 and max 700 µs.
func TestStampSources(t *testing.T) {
	us := int64(time.Microsecond)
	a := &trace.Record{ID: "a", Chunks: []trace.Chunk{
		{ServerT: 1000 * us, T: 1010 * us, UserT: 1110 * us},
		{ServerT: 2000 * us, T: 2030 * us, UserT: 2530 * us},
		{T: 2600 * us, UserT: 2700 * us},
	}}
	b := &trace.Record{ID: "b", Notes: "user-space timestamps for this request: a read came without a timestamp control message",
		Chunks: []trace.Chunk{{ServerT: 3000 * us, T: 3700 * us}}}
	got, fellBack := stampSources([]*trace.Record{b, a})
	want := []StampSource{
		{Source: "kernel", Chunks: 2, P50: 10 * time.Microsecond, P99: 30 * time.Microsecond, Max: 30 * time.Microsecond},
		{Source: "user", Chunks: 3, P50: 530 * time.Microsecond, P99: 700 * time.Microsecond, Max: 700 * time.Microsecond},
	}
	if fellBack != 1 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("stampSources = %+v, %d fell back; want %+v, 1", got, fellBack, want)
	}
	var out bytes.Buffer
	writeStampSources(&out, []StampRow{{Streams: 16, Sources: got, FellBack: fellBack}})
	if s := out.String(); !strings.Contains(s, "16\tkernel\t2\t10µs\t30µs\t30µs") || !strings.Contains(s, "1 requests fell back") {
		t.Errorf("table:\n%s", s)
	}

	// User-space times only (--timestamps user, another OS): one source,
	// nothing fell back, and no by-source table.
	c := &trace.Record{ID: "c", Chunks: []trace.Chunk{{ServerT: 1000 * us, T: 1200 * us}}}
	got, fellBack = stampSources([]*trace.Record{c})
	if fellBack != 0 || len(got) != 1 || got[0].Source != "user" || got[0].P50 != 200*time.Microsecond {
		t.Errorf("user only: %+v, %d fell back", got, fellBack)
	}
	out.Reset()
	writeStampSources(&out, []StampRow{{Streams: 16, Sources: got}})
	if out.Len() != 0 {
		t.Errorf("a by-source table for one source:\n%s", out.String())
	}
}
