package trace

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// Format 1.5: a record with kernel stamps and no per-chunk user-space
// times ends with the marker −1 in the column's place and the delays'
// mean and largest. A value no delay can have (negative, or a largest
// below the mean) leaves the summary unset and the record otherwise
// whole; a 1.4 reader, which takes the marker for a column holding a
// negative value, ignores the lot (its rule for field 35).
func TestUserDelaySummary(t *testing.T) {
	base := Record{
		ID: "r", Scheduled: 10, Sent: 20, Headers: 30, Done: 90, Status: 200,
		Chunks: []Chunk{{T: 40, Bytes: 9, Text: "a"}, {T: 50, Bytes: 9, Text: "b"}},
	}
	tail := func(mean, most int64) []byte {
		b := binary.AppendVarint(nil, -1)
		b = binary.AppendVarint(b, mean)
		return binary.AppendVarint(b, most)
	}
	for _, tc := range []struct {
		name               string
		mean, most         int64 // written
		wantMean, wantMost int64 // read back
		corruptTail        []byte
	}{
		{name: "summary", mean: 12_500, most: 20_000, wantMean: 12_500, wantMost: 20_000},
		{name: "largest equals mean", mean: 7, most: 7, wantMean: 7, wantMost: 7},
		{name: "largest below the mean", corruptTail: tail(20, 10)},
		{name: "negative mean", corruptTail: tail(-5, 10)},
		{name: "cut after the marker", corruptTail: binary.AppendVarint(nil, -1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Session, r.Turn = "s1", 2
			r.UserDelayMean, r.UserDelayMax = tc.mean, tc.most
			if tc.corruptTail != nil {
				r.UserDelayMean, r.UserDelayMax = 0, 0
			}
			body := appendRecordV1(nil, &r)
			if tc.corruptTail != nil {
				body = append(body, tc.corruptTail...)
			} else if want := tail(tc.mean, tc.most); !bytes.HasSuffix(body, want) {
				t.Fatalf("body ends % x; want the marker and summary % x", body[len(body)-len(want):], want)
			}
			var d v1Decoder
			got, err := d.decode(string(body))
			if err != nil {
				t.Fatal(err)
			}
			if got.UserDelayMean != tc.wantMean || got.UserDelayMax != tc.wantMost {
				t.Errorf("summary %d/%d; want %d/%d", got.UserDelayMean, got.UserDelayMax, tc.wantMean, tc.wantMost)
			}
			if got.Session != "s1" || got.Turn != 2 || len(got.Chunks) != 2 || got.Chunks[1].T != 50 {
				t.Errorf("the fields before the summary were lost: %+v", got)
			}
			for _, c := range got.Chunks {
				if c.UserT != 0 {
					t.Errorf("a chunk got a user-space time %d from a summary", c.UserT)
				}
			}
		})
	}
}

// A request with no delays to tell (user-space times) writes no 1.5
// bytes: its record ends with 1.4's last field, as 1.4 wrote it.
func TestUserDelayAbsentWritesNothing(t *testing.T) {
	r := Record{ID: "r", Sent: 20, Headers: 30, Done: 90, Status: 200, Chunks: []Chunk{{T: 40, Bytes: 9, Text: "a"}}}
	r.Session, r.Turn = "s", 1
	body := appendRecordV1(nil, &r)
	want := binary.AppendVarint(binary.AppendVarint(appendString(nil, "s"), 1), 0) // session, turn, sent_input_tokens
	if !bytes.HasSuffix(body, want) {
		t.Errorf("body ends % x; want 1.4's session fields % x last", body[len(body)-len(want)-3:], want)
	}
}

// TestShiftKeepsUserTimes: a record moved onto another run's clock (a
// capacity round, a shard of a merged trace) keeps each chunk's
// user-space time and its delays through the writer and the reader.
// Moving T alone once left every UserT−T negative, and the reader dropped
// the column, and with it the delays, as it must.
func TestShiftKeepsUserTimes(t *testing.T) {
	r := Record{
		ID: "r", Scheduled: 10, Sent: 20, Headers: 30, Done: 90, Status: 200,
		Chunks:        []Chunk{{T: 40, Bytes: 9, Text: "a", UserT: 105}, {T: 50, Bytes: 9, Text: "b", UserT: 130}},
		UserDelayMean: 72, UserDelayMax: 80, // (65 + 80) / 2, as the reader computes it
	}
	const d = 2_000_000_000
	r.Shift(d)
	if r.Sent != 20+d || r.Chunks[0].T != 40+d || r.Chunks[0].UserT != 105+d || r.Chunks[1].UserT != 130+d || r.Chunks[1].ServerT != 0 {
		t.Fatalf("shifted %+v", r)
	}
	var dec v1Decoder
	got, err := dec.decode(string(appendRecordV1(nil, &r)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Chunks[0].UserT != 105+d || got.Chunks[1].UserT != 130+d || got.UserDelayMean != 72 || got.UserDelayMax != 80 {
		t.Errorf("read back chunk user times %d, %d and delays %d/%d; want %d, %d and 72/80",
			got.Chunks[0].UserT, got.Chunks[1].UserT, got.UserDelayMean, got.UserDelayMax, 105+d, 130+d)
	}
}

// TestUserTimesNoColumnPastBounds: a column the reader would drop whole
// (a user time before its chunk's stamp, or a delay past MaxUserDelay)
// is not written; the record's summary of the delays goes in its place.
// A summary or column past MaxUserDelay reads as none.
func TestUserTimesNoColumnPastBounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		userT1 int64 // the second chunk's user time (T = 50)
	}{
		{"before its stamp", 45},
		{"past the bound", 50 + MaxUserDelay + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Record{ID: "r", Sent: 20, Headers: 30, Done: 90, Status: 200,
				Chunks:        []Chunk{{T: 40, Bytes: 9, Text: "a", UserT: 105}, {T: 50, Bytes: 9, Text: "b", UserT: tc.userT1}},
				UserDelayMean: 65, UserDelayMax: 65}
			var dec v1Decoder
			got, err := dec.decode(string(appendRecordV1(nil, &r)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Chunks[0].UserT != 0 || got.Chunks[1].UserT != 0 || got.UserDelayMean != 65 || got.UserDelayMax != 65 {
				t.Errorf("chunk user times %d, %d, delays %d/%d; want none kept and the summary 65/65", got.Chunks[0].UserT, got.Chunks[1].UserT, got.UserDelayMean, got.UserDelayMax)
			}
		})
	}
	r := Record{ID: "r", Sent: 20, Done: 90, Status: 200, Chunks: []Chunk{{T: 40, Bytes: 9, Text: "a"}},
		UserDelayMean: 5, UserDelayMax: MaxUserDelay + 1}
	var dec v1Decoder
	got, err := dec.decode(string(appendRecordV1(nil, &r)))
	if err != nil {
		t.Fatal(err)
	}
	if got.UserDelayMean != 0 || got.UserDelayMax != 0 {
		t.Errorf("a summary past the bound read as %d/%d; want none", got.UserDelayMean, got.UserDelayMax)
	}
}

// TestStatsDelaySumSaturates: hand-made delays whose sum passes int64
// (only a crafted trace has them) leave the sum at its largest, not
// negative.
func TestStatsDelaySumSaturates(t *testing.T) {
	s := NewStats()
	r := &Record{Chunks: make([]Chunk, 4), UserDelayMean: 1 << 62, UserDelayMax: 1 << 62}
	s.Add(r)
	if s.DelaySum != math.MaxInt64 {
		t.Errorf("sum %d after 4 × 2^62; want it saturated at %d", s.DelaySum, int64(math.MaxInt64))
	}
	s.Add(&Record{Chunks: make([]Chunk, 1), UserDelayMean: 1, UserDelayMax: 1})
	if s.DelaySum != math.MaxInt64 || s.DelayChunks != 5 {
		t.Errorf("sum %d over %d chunks; want saturated over 5", s.DelaySum, s.DelayChunks)
	}
}
