package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWriterKeepsWithinReaderLimits: whatever a server sends, the writer
// writes only what the reader reads back (issue: a 273 MB entry and 12 MB
// of one repeated character made traces that every command refused). Text
// is cut, counted in Clipped and noted; times and the records after it are
// kept.
func TestWriterKeepsWithinReaderLimits(t *testing.T) {
	noise := func(n int) string {
		b := make([]byte, n)
		rand.NewChaCha8([32]byte{7}).Read(b)
		for i := range b {
			b[i] = 'a' + b[i]%26 // text, and not compressible 1000×
		}
		return string(b)
	}
	chunks := func(n int, text func(i int) string) []Chunk {
		c := make([]Chunk, n)
		for i := range c {
			c[i] = Chunk{T: int64(1000 + i), Text: text(i)}
			c[i].Bytes = len(c[i].Text) + 40
		}
		return c
	}
	big := noise(4 << 20)
	tests := []struct {
		name        string
		recs        []Record
		wantClipped []int64 // per record, -1: some, 0: none
	}{
		{"text past the record bound", []Record{
			{ID: "big", Sent: 1, Chunks: chunks(10, func(int) string { return big })}, // 40 MiB
			{ID: "after", Sent: 1, Chunks: chunks(2, func(int) string { return " 1" })},
		}, []int64{10*(4<<20) - maxRecordText, 0}},
		{"one repeated character", []Record{
			{ID: "before", Sent: 1, Chunks: chunks(2, func(int) string { return " 1" })},
			{ID: "aaaa", Sent: 1, Chunks: chunks(3, func(int) string { return strings.Repeat("a", 4<<20) })}, // 12 MiB
			{ID: "after", Sent: 1, Chunks: chunks(2, func(int) string { return " 2" })},
		}, []int64{0, 12 << 20, 0}},
		{"many compressible records", func() []Record {
			var r []Record
			for i := range 60 {
				r = append(r, Record{ID: fmt.Sprintf("r%d", i), Index: i, Sent: 1, Chunks: chunks(1, func(int) string { return strings.Repeat("b", 300<<10) })})
			}
			return r
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, Header{Label: "limits"}, WithFlushInterval(0))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.recs {
				before := textBytes(&tt.recs[i])
				if err := w.Write(&tt.recs[i]); err != nil {
					t.Fatal(err)
				}
				// The writer clips a copy: a caller may reuse its record.
				if textBytes(&tt.recs[i]) != before || tt.recs[i].Clipped != 0 || tt.recs[i].Notes != "" {
					t.Fatalf("record %d was changed by Write", i)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var got []Record
			for r.Scan() {
				got = append(got, copyRecord(r.Record()))
			}
			if r.Err() != nil || r.Truncated() {
				t.Fatalf("the reader refused what the writer wrote: Err %v, truncated %v", r.Err(), r.Truncated())
			}
			if len(got) != len(tt.recs) {
				t.Fatalf("read %d records of %d", len(got), len(tt.recs))
			}
			for i, g := range got {
				if len(g.Chunks) != len(tt.recs[i].Chunks) {
					t.Errorf("record %d: %d chunks of %d: times must be kept", i, len(g.Chunks), len(tt.recs[i].Chunks))
				}
				if g.Clipped > 0 && !strings.Contains(g.Notes, "bytes of text are not kept") {
					t.Errorf("record %d clipped without a note: %q", i, g.Notes)
				}
				if tt.wantClipped != nil && g.Clipped != tt.wantClipped[i] {
					t.Errorf("record %d: Clipped %d, want %d", i, g.Clipped, tt.wantClipped[i])
				}
				kept := 0
				for _, c := range g.Chunks {
					kept += len(c.Text)
				}
				sent := 0
				for _, c := range tt.recs[i].Chunks {
					sent += c.Bytes - 40
				}
				if int64(kept)+g.Clipped != int64(sent) {
					t.Errorf("record %d: %d bytes kept + %d clipped != %d sent", i, kept, g.Clipped, sent)
				}
			}
			if tt.wantClipped == nil && w.Stats().Clipped == 0 {
				t.Errorf("60 × 300 KiB of one character: expected the writer to clip some once the file looked like a bomb")
			}
		})
	}
}
