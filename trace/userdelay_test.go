package trace

import (
	"bytes"
	"encoding/binary"
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
