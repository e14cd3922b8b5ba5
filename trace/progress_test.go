package trace

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// progressRecord is the i-th record of the progress tests.
func progressRecord(i int) Record {
	return Record{ID: fmt.Sprintf("r%02d", i), Index: i, Sent: int64(i) * 1000, Headers: int64(i)*1000 + 100,
		Done: int64(i)*1000 + 900, Status: 200, Chunks: []Chunk{{T: int64(i)*1000 + 500, Bytes: 9, Text: " 1"}}}
}

// TestCutBetweenFlushes writes a trace as a run does, with requests in
// flight at every flush (sent runs three ahead of the records written),
// and cuts it exactly where each flush ended, where up to 1.5 a kill left
// a file that read as whole: each cut reads as cut short, with every
// record flushed before it and the last flush's progress, from which the
// in-flight requests are told from those never sent. Only the whole file
// is complete.
func TestCutBetweenFlushes(t *testing.T) {
	var buf bytes.Buffer
	var now, sent int64
	w, err := NewWriter(&buf, Header{Label: "cut", Phases: []Phase{{Index: 0, Requests: 10}}}, WithFlushInterval(0),
		WithProgress(func() (int64, int64) { return now, sent }))
	if err != nil {
		t.Fatal(err)
	}
	type cut struct {
		at            int
		records, sent int64
	}
	cuts := []cut{{buf.Len(), 0, 0}}
	for i := range 8 {
		sent = min(int64(i)+3, 10)
		r := progressRecord(i)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			now = int64(i) * 1_000_000
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			cuts = append(cuts, cut{buf.Len(), int64(i) + 1, sent})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for k, c := range cuts {
		r, err := NewReader(bytes.NewReader(data[:c.at]))
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for r.Scan() {
			n++
		}
		p, ok := r.Progress()
		if r.Err() != nil || !r.Truncated() || n != c.records {
			t.Fatalf("cut %d at byte %d (a flush's end): %d records, Truncated %v, Err %v; want %d records, cut short", k, c.at, n, r.Truncated(), r.Err(), c.records)
		}
		if want := (Progress{Seq: int64(k) + 1, T: p.T, Sent: c.sent, Records: c.records}); !ok || p != want {
			t.Errorf("cut %d: progress %+v (%v), want %+v", k, p, ok, want)
		}
	}
	// At the fourth flush 8 records were written and 10 sent, at 7 ms:
	// 2 in flight, none left unsent, of the 10 planned.
	if got, want := CutSummary(8, 8, 10, 10, 7_000_000), "cut off after 8 of 10 requests (the run was killed or crashed, or is still running): at least 2 were in flight and lost (sent by the last flush, 7ms into the run, with no record), at most 0 never sent"; got != want {
		t.Errorf("CutSummary:\n got %s\nwant %s", got, want)
	}
	_, recs, r := readAll(t, data)
	if p, _ := r.Progress(); r.Truncated() || len(recs) != 8 || !p.Closed || p.Records != 8 {
		t.Errorf("whole file: %d records, Truncated %v, progress %+v", len(recs), r.Truncated(), p)
	}
}

// TestDuplicatedFrameSkipped: a 1.5 trace (a frame per flush) with one of
// its frames written twice holds each of that frame's records twice: the
// reader returns each once and says the repeats were skipped.
func TestDuplicatedFrameSkipped(t *testing.T) {
	head := compress(t, rawStream(1, 5, `{"label":"dup"}`))
	frame := func(from, to int) []byte {
		var raw []byte
		for i := from; i < to; i++ {
			r := progressRecord(i)
			raw = entry(raw, tagRecord, appendRecordV1(nil, &r))
		}
		return compress(t, raw)
	}
	b, c := frame(0, 2), frame(2, 4)
	file := bytes.Join([][]byte{head, b, c, c, frame(4, 5)}, nil)
	_, got, r := readAll(t, file)
	var want []Record
	for i := range 5 {
		want = append(want, progressRecord(i))
	}
	if d := cmp.Diff(want, got, cmpRecords); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	n, first := r.Skipped()
	if n != 2 || first == nil || !strings.Contains(first.Error(), `record "r02" appears twice`) {
		t.Errorf("Skipped() = %d, %v; want the 2 repeats, the first r02", n, first)
	}
	if r.Err() != nil || r.Truncated() {
		t.Errorf("Err %v, Truncated %v", r.Err(), r.Truncated())
	}
}

// TestTwoTracesJoined: a 1.6 trace is one zstd frame; that frame written
// twice (or two traces joined with cat) puts a second header where an
// entry should start. The reader stops there with an error that says so,
// after the first copy's records.
func TestTwoTracesJoined(t *testing.T) {
	recs := synthRun(synthConfig{Requests: 4, Tokens: 4, Concurrency: 2, Seed: 3})
	one := encodeRun(t, recs, 0)
	_, got, r := readAll(t, append(append([]byte(nil), one...), one...))
	if r.Err() == nil || !strings.Contains(r.Err().Error(), "a second trace header follows record 4") || len(got) != len(recs) {
		t.Errorf("read %d records, Err %v; want the %d of the first copy and the second header named", len(got), r.Err(), len(recs))
	}
}

// TestProgressOutOfTurn: progress entries out of order, or counting other
// records than the file holds, are a repeated or missing stretch, said as
// skipped entries; the records are all returned.
func TestProgressOutOfTurn(t *testing.T) {
	prog := func(seq, records int64) []byte {
		return appendProgressV1(nil, &Progress{Seq: seq, Sent: -1, Records: records})
	}
	rec := func(i int) []byte { r := progressRecord(i); return appendRecordV1(nil, &r) }
	for _, tc := range []struct {
		name    string
		entries [][2]any // tag, body
		want    string
	}{
		{"a repeated entry", [][2]any{{tagRecord, rec(0)}, {tagProgress, prog(1, 1)}, {tagRecord, rec(1)}, {tagProgress, prog(1, 1)}}, "progress entry 1 follows entry 1"},
		{"a missing entry", [][2]any{{tagProgress, prog(1, 0)}, {tagRecord, rec(0)}, {tagProgress, prog(3, 1)}}, "progress entry 3 follows entry 1"},
		{"records missing", [][2]any{{tagRecord, rec(0)}, {tagProgress, prog(1, 3)}}, "2 records are missing before progress entry 1"},
		{"records repeated", [][2]any{{tagRecord, rec(0)}, {tagRecord, rec(1)}, {tagProgress, prog(1, 1)}}, "1 records more than the writer had written by progress entry 1"},
		{"after the close", [][2]any{{tagProgress, appendProgressV1(nil, &Progress{Seq: 1, Closed: true})}, {tagProgress, prog(2, 0)}}, "follows the trace's closing entry"},
		{"a garbled entry", [][2]any{{tagProgress, []byte{0}}}, "progress entry: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawStream(1, 6, "{}")
			for _, e := range tc.entries {
				raw = entry(raw, uint64(e[0].(int)), e[1].([]byte))
			}
			r, err := NewReader(bytes.NewReader(compress(t, raw)))
			if err != nil {
				t.Fatal(err)
			}
			for r.Scan() {
			}
			if n, first := r.Skipped(); n != 1 || !strings.Contains(fmt.Sprint(first), tc.want) {
				t.Errorf("Skipped() = %d, %v; want one, %q", n, first, tc.want)
			}
			if r.Err() != nil {
				t.Errorf("Err %v", r.Err())
			}
		})
	}
}

// TestOldKernelTraceMarked: a 1.5 trace with kernel stamps marks no chunk
// read late, but its chunks of one read share that read's stamp, which is
// what the mark needs; the reader marks them. Here the headers' read came
// at 100, then one read at 400 brought three text chunks and a usage
// chunk, then one at 700 the last text chunk: the first two of the three
// are read late (the third is its read's last text chunk; the usage chunk
// carries no text), each by up to 400 − 100 = 300 ns. A 1.5 trace with
// user-space times is left alone.
func TestOldKernelTraceMarked(t *testing.T) {
	rec := Record{ID: "k", Sent: 10, Headers: 100, Done: 700, Status: 200, Chunks: []Chunk{
		{T: 400, Bytes: 3, Text: "1"}, {T: 400, Bytes: 3, Text: ","}, {T: 400, Bytes: 3, Text: " 2"}, {T: 400, Bytes: 40},
		{T: 700, Bytes: 3, Text: ","},
	}}
	for _, tc := range []struct {
		header   string
		wantLate []bool
		n        int
		most     int64
	}{
		{`{"timestamps":"kernel"}`, []bool{true, true, false, false, false}, 2, 300},
		{`{"timestamps":"user"}`, []bool{false, false, false, false, false}, 0, 0},
	} {
		raw := entry(rawStream(1, 5, tc.header), tagRecord, appendRecordV1(nil, &rec))
		_, got, r := readAll(t, compress(t, raw))
		if r.Err() != nil || len(got) != 1 {
			t.Fatalf("%s: %d records, Err %v", tc.header, len(got), r.Err())
		}
		var late []bool
		for _, c := range got[0].Chunks {
			late = append(late, c.ReadLate)
		}
		if !slices.Equal(late, tc.wantLate) || got[0].ReadLate != tc.n || got[0].ReadLateMax != tc.most {
			t.Errorf("%s: marks %v, %d, up to %d; want %v, %d, %d", tc.header, late, got[0].ReadLate, got[0].ReadLateMax, tc.wantLate, tc.n, tc.most)
		}
	}
}

// FuzzProgressV1: a progress entry's body, whatever its bytes, decodes or
// is refused without panicking; what decodes encodes back to itself.
func FuzzProgressV1(f *testing.F) {
	f.Add(appendProgressV1(nil, &Progress{Seq: 3, T: 1_000_000_000, Sent: 40, Records: 37}))
	f.Add(appendProgressV1(nil, &Progress{Seq: 9, Sent: -1, Records: 80, Closed: true}))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p Progress
		if decodeProgressV1(string(body), &p) != nil {
			return
		}
		var q Progress
		if err := decodeProgressV1(string(appendProgressV1(nil, &p)), &q); err != nil || p != q {
			t.Fatalf("%+v round-trips to %+v (%v)", p, q, err)
		}
	})
}
