package replay

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestReadLateMarks works the two marks of a late read out by hand, as
// reqClock.apply sets them from each read's kernel stamp (T) and the time
// the read returned (UserT):
//
//	chunk  T    UserT  read
//	a      100  105    its own; returned before b arrived (200): on time
//	b      200  260    its own, but returned at 260, after c had arrived
//	                   (250): slow, delay 260 − 200 = 60
//	c, d   250  270    one read: c shares d's stamp, its own arrival is
//	                   somewhere after the previous read (200): late by
//	                   up to 250 − 200 = 50; d is the read's last: its own
//	e      400  401    on time
//
// So b and c are marked, 2 per request, the worst delay 60.
func TestReadLateMarks(t *testing.T) {
	rec := &trace.Record{Sent: 0, Headers: 10, Chunks: []trace.Chunk{
		{T: 100, UserT: 105, Text: "a"},
		{T: 200, UserT: 260, Text: "b"},
		{T: 250, UserT: 270, Text: "c"},
		{T: 250, UserT: 270, Text: "d"},
		{T: 400, UserT: 401, Text: "e"},
	}}
	trace.MarkSharedReads(rec)
	markSlowReads(rec)
	var got []string
	for _, c := range rec.Chunks {
		if c.ReadLate {
			got = append(got, c.Text)
		}
	}
	if len(got) != 2 || got[0] != "b" || got[1] != "c" || rec.ReadLate != 2 || rec.ReadLateMax != 60 {
		t.Errorf("marked %v, ReadLate %d, worst %d; want [b c], 2, 60", got, rec.ReadLate, rec.ReadLateMax)
	}
	// A stream read on time, one chunk per read, carries no mark.
	rec = &trace.Record{Chunks: []trace.Chunk{{T: 100, UserT: 150, Text: "a"}, {T: 200, UserT: 210, Text: "b"}}}
	trace.MarkSharedReads(rec)
	markSlowReads(rec)
	if rec.ReadLate != 0 || rec.ReadLateMax != 0 || rec.Chunks[0].ReadLate || rec.Chunks[1].ReadLate {
		t.Errorf("a stream read on time got marks: %+v", rec)
	}
}
