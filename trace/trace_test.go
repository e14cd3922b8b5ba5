package trace

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpRecords ignores nil-versus-empty chunk slices: a record without chunks
// reads back with nil Chunks whatever it was written with.
var cmpRecords = cmpopts.EquateEmpty()

// readAll decodes a whole trace, copying each record (Record() is reused).
func readAll(tb testing.TB, data []byte) (Header, []Record, *Reader) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("NewReader: %v", err)
	}
	var out []Record
	for r.Scan() {
		out = append(out, copyRecord(r.Record()))
	}
	return r.Header(), out, r
}

func copyRecord(r *Record) Record {
	c := *r
	c.Chunks = append([]Chunk(nil), r.Chunks...)
	if r.Error != nil {
		e := *r.Error
		c.Error = &e
	}
	return c
}

// randString mixes ASCII, multi-byte UTF-8, invalid UTF-8 and NUL bytes:
// the format stores bytes, not text.
func randString(rng *rand.Rand, maxLen int) string {
	if rng.IntN(4) == 0 {
		return ""
	}
	n := rng.IntN(maxLen + 1)
	var b strings.Builder
	for b.Len() < n {
		switch rng.IntN(6) {
		case 0:
			b.WriteString("é")
		case 1:
			b.WriteByte(byte(rng.IntN(256)))
		case 2:
			b.WriteByte(0)
		default:
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	return b.String()
}

// randInt64 favours the edges: 0, negatives, and extremes that overflow
// when deltas are taken.
func randInt64(rng *rand.Rand) int64 {
	switch rng.IntN(8) {
	case 0:
		return 0
	case 1:
		return math.MaxInt64 - rng.Int64N(3)
	case 2:
		return math.MinInt64 + rng.Int64N(3)
	case 3:
		return -rng.Int64N(1 << 40)
	default:
		return rng.Int64N(1 << 40)
	}
}

func randRecord(rng *rand.Rand) Record {
	r := Record{
		ID:           randString(rng, 20),
		Index:        int(randInt64(rng)),
		Phase:        rng.IntN(5) - 1,
		Warmup:       rng.IntN(3) == 0,
		InputTokens:  int(randInt64(rng)),
		MaxTokens:    int(randInt64(rng)),
		Scheduled:    randInt64(rng),
		Sent:         randInt64(rng),
		Headers:      randInt64(rng),
		Done:         randInt64(rng),
		Status:       []int{0, 200, 400, 503, -1}[rng.IntN(5)],
		FinishReason: randString(rng, 8),
		Usage:        randString(rng, 60),
		Timings:      randString(rng, 60),
	}
	if rng.IntN(3) == 0 {
		r.Error = &Error{Class: ErrorClass(randString(rng, 12)), Message: randString(rng, 40), Body: randString(rng, 300)}
	}
	n := []int{0, 1, 2, 17, 150}[rng.IntN(5)]
	if n > 0 {
		r.Chunks = make([]Chunk, n)
	}
	reasoning, tokens, serverT := rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(2) == 0
	for i := range r.Chunks {
		c := &r.Chunks[i]
		c.T = randInt64(rng)
		c.Text = randString(rng, 12)
		if reasoning {
			c.Reasoning = randString(rng, 12)
		}
		c.Bytes = int(randInt64(rng))
		if tokens {
			c.Tokens = int(randInt64(rng))
		}
		if serverT {
			c.ServerT = randInt64(rng)
		}
	}
	return r
}

func TestRoundTripRandom(t *testing.T) {
	for seed := range uint64(16) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			want := make([]Record, rng.IntN(40))
			for i := range want {
				want[i] = randRecord(rng)
			}
			h := synthHeader
			h.Options = map[string]string{"seed": fmt.Sprint(seed)}
			var buf bytes.Buffer
			w, err := NewWriter(&buf, h, WithFlushInterval(0))
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if err := w.Write(&want[i]); err != nil {
					t.Fatal(err)
				}
				if rng.IntN(5) == 0 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			gotH, got, r := readAll(t, buf.Bytes())
			if r.Err() != nil || r.Truncated() {
				t.Fatalf("Err %v, Truncated %v", r.Err(), r.Truncated())
			}
			wantH := h
			wantH.Format, wantH.Major, wantH.Minor = FormatName, FormatMajor, FormatMinor
			if d := cmp.Diff(wantH, gotH); d != "" {
				t.Errorf("header (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, got, cmpRecords); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
		})
	}
}

// TestTruncatedAtEveryOffset cuts a trace written with several flushes at
// every byte offset: the reader must never panic or report corruption,
// must return every record flushed before the cut, and must report every
// cut, those between two flushes included, as a cut-short tail (1.6: only
// the closing progress entry makes a trace whole).
func TestTruncatedAtEveryOffset(t *testing.T) {
	recs := synthRun(synthConfig{Requests: 6, Tokens: 6, Concurrency: 3, Seed: 5})
	var buf bytes.Buffer
	w, err := NewWriter(&buf, synthHeader, WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := buf.Len()
	// flushedAt[k] = file size after the flush that made k records durable.
	flushedAt := map[int]int{0: headerEnd}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			flushedAt[i+1] = buf.Len()
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	flushedAt[len(recs)] = buf.Len()
	data := buf.Bytes()
	for cut := 0; cut <= len(data); cut++ {
		r, err := NewReader(bytes.NewReader(data[:cut]))
		if cut < headerEnd {
			if err == nil {
				t.Fatalf("cut %d inside the header frame: NewReader accepted it", cut)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		var got []Record
		for r.Scan() {
			got = append(got, copyRecord(r.Record()))
		}
		if r.Err() != nil {
			t.Fatalf("cut %d of %d: a truncated file reported corruption: %v", cut, len(data), r.Err())
		}
		durable := 0
		for k, size := range flushedAt {
			if size <= cut && k > durable {
				durable = k
			}
		}
		if len(got) < durable {
			t.Fatalf("cut %d: got %d records, want at least the %d flushed before it", cut, len(got), durable)
		}
		if d := cmp.Diff(recs[:len(got)], got, cmpRecords); d != "" {
			t.Fatalf("cut %d: records differ (-want +got):\n%s", cut, d)
		}
		if whole := cut == len(data); whole == r.Truncated() {
			t.Fatalf("cut %d of %d: Truncated() = %v", cut, len(data), r.Truncated())
		}
	}
}

// openTest opens the trace at path for a test, which fails if it cannot;
// the reader is closed when the test ends.
func openTest(t *testing.T, path string) *Reader {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
