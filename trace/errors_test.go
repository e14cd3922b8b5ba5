package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// compress wraps a hand-made decompressed stream in one zstd frame.
func compress(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	return enc.EncodeAll(raw, nil)
}

// rawStream builds magic, version and a JSON header, for tests that then
// append hand-made entries.
func rawStream(major, minor uint64, header string) []byte {
	b := []byte(magic)
	b = binary.AppendUvarint(b, major)
	b = binary.AppendUvarint(b, minor)
	b = binary.AppendUvarint(b, uint64(len(header)))
	return append(b, header...)
}

func entry(b []byte, tag uint64, body []byte) []byte {
	b = binary.AppendUvarint(b, tag)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

func TestNewerMajorRefused(t *testing.T) {
	data := compress(t, rawStream(2, 0, `{"format":"llmreplay-trace","major":2}`))
	_, err := NewReader(bytes.NewReader(data))
	want := "written by a newer llmreplay (trace format 2.0); this build reads 1.x: upgrade llmreplay"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

func TestNotATraceRefused(t *testing.T) {
	huge := binary.AppendUvarint(append([]byte(magic), 1, 0), 1<<62)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"text", []byte("hello, world\n"), "not zstd-compressed"},
		{"short", []byte{0x28}, "not zstd-compressed"},
		{"gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, "not zstd-compressed"},
		{"other zstd", compress(t, []byte(`{"hello":"world"} and more text here`)), "not an llmreplay trace"},
		{"workload", compress(t, []byte("llmreplay-workload\x01\x00{}")), "workload file, not a trace"},
		{"header cut", compress(t, []byte("llmreplay-tr")), "ends inside its header"},
		{"version 0", compress(t, rawStream(0, 3, "{}")), "never written"},
		{"huge header", compress(t, huge), "exceeds"},
		{"header not JSON", compress(t, rawStream(1, 0, "{nope")), "not valid JSON"},
		{"corrupt zstd", append([]byte{0x28, 0xb5, 0x2f, 0xfd}, bytes.Repeat([]byte{0xff}, 40)...), "cannot decompress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tt.data))
			if err == nil {
				r.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestCorruptEntries checks entries that are wrong, as opposed to cut short.
// An entry whose framing holds (its length is right) is skipped and the
// records on both sides of it are read: a damaged record must not hide the
// rest of a run. An entry that breaks the framing stops the scan with Err,
// after the good records before it.
func TestCorruptEntries(t *testing.T) {
	good := appendRecordV1(nil, &Record{ID: "ok", Chunks: []Chunk{{T: 5, Text: "hi", Bytes: 2}}})
	// Every record id is its request's: the good one after the bad entry
	// is another request (the reader skips a repeated id).
	good2 := appendRecordV1(nil, &Record{ID: "ok2", Chunks: []Chunk{{T: 5, Text: "hi", Bytes: 2}}})
	tooMany := appendRecordV1(nil, &Record{ID: "x"})
	tooMany = binary.AppendUvarint(tooMany[:len(tooMany)-1], 1<<40) // chunk count
	textPastEnd := appendRecordV1(nil, &Record{ID: "y", Chunks: []Chunk{{Text: "abc"}, {Text: "def"}}})
	textPastEnd = textPastEnd[:len(textPastEnd)-3]
	overflow := append([]byte{1, 'z'}, bytes.Repeat([]byte{0xff}, 10)...)
	// An entry over the reader's limit whose bytes are there: skipped
	// (the limit lowered to 64 KiB for the test; random bytes, which do
	// not look like a zstd bomb).
	defer func(l uint64) { entryLimit = l }(entryLimit)
	entryLimit = 64 << 10
	oversized := binary.AppendUvarint([]byte{tagRecord}, entryLimit+1)
	noise := make([]byte, entryLimit+1)
	rand.NewChaCha8([32]byte{1}).Read(noise)
	oversized = append(oversized, noise...)
	tests := []struct {
		name    string
		entry   []byte
		skipped bool // framing held: the record after it is read too
		want    string
	}{
		{"tag 0", []byte{0, 0}, false, "tag 0"},
		{"length 2^62", binary.AppendUvarint([]byte{tagRecord}, 1<<62), false, "exceeds"},
		{"oversized entry", oversized, true, "an entry of 65537 bytes exceeds the 65536-byte limit"},
		{"chunk count 2^40", entry(nil, tagRecord, tooMany), true, "exceeds"},
		{"texts past end", entry(nil, tagRecord, textPastEnd), true, "chunk texts"},
		{"varint overflow", entry(nil, tagRecord, overflow), true, "overflow"},
		{"empty body", entry(nil, tagRecord, nil), true, "ends early"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := rawStream(1, 0, "{}")
			raw = entry(raw, tagRecord, good)
			raw = append(raw, tt.entry...)
			raw = entry(raw, tagRecord, good2)
			r, err := NewReader(bytes.NewReader(compress(t, raw)))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for r.Scan() {
				n++
			}
			skipped, first := r.Skipped()
			if !tt.skipped {
				if n != 1 {
					t.Errorf("read %d records before the bad one, want 1", n)
				}
				if r.Err() == nil || !strings.Contains(r.Err().Error(), tt.want) {
					t.Fatalf("Err() = %v, want it to contain %q", r.Err(), tt.want)
				}
				return
			}
			if n != 2 || r.Err() != nil || r.Truncated() {
				t.Fatalf("read %d records (Err %v, Truncated %v), want both good ones around the bad entry", n, r.Err(), r.Truncated())
			}
			if skipped != 1 || first == nil || !strings.Contains(first.Error(), tt.want) {
				t.Fatalf("Skipped() = %d, %v; want 1 with %q", skipped, first, tt.want)
			}
		})
	}
}

// TestLaterMinorSkipped reads a stream as a later 1.x writer might write
// it: an entry kind 1.0 does not know, a record with fields appended, and
// header fields 1.0 does not know; and, as every writer since 1.6, a
// closing progress entry, with fields appended too.
func TestLaterMinorSkipped(t *testing.T) {
	want := Record{ID: "a", Index: 3, Sent: 10, Chunks: []Chunk{{T: 12, Bytes: 9, Text: " 1", Tokens: 1}}}
	body := appendRecordV1(nil, &want)
	body = append(body, "fields of 1.7"...)
	raw := rawStream(1, 7, `{"label":"x","new_field":[1,2,3]}`)
	raw = entry(raw, 9, []byte("a footer, say"))
	raw = entry(raw, tagRecord, body)
	raw = entry(raw, tagProgress, append(appendProgressV1(nil, &Progress{Seq: 1, Sent: 1, Records: 1, Closed: true}), 0x7f))
	_, got, r := readAll(t, compress(t, raw))
	if r.Err() != nil || r.Truncated() {
		t.Fatalf("Err %v, Truncated %v", r.Err(), r.Truncated())
	}
	if maj, min := r.Version(); maj != 1 || min != 7 || r.Header().Label != "x" {
		t.Errorf("version %d.%d, label %q", maj, min, r.Header().Label)
	}
	if d := cmp.Diff([]Record{want}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestCorruptFrameIsAnError flips bytes inside a middle frame: that is
// damage, not a crash, so it must surface as Err, never as a quiet end.
func TestCorruptFrameIsAnError(t *testing.T) {
	recs := synthRun(synthConfig{Requests: 6, Tokens: 40, Concurrency: 2, Seed: 3})
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, synthHeader, WithFlushInterval(0))
	var bounds []int
	for i := range recs {
		w.Write(&recs[i])
		if i%2 == 1 {
			w.Flush()
			bounds = append(bounds, buf.Len())
		}
	}
	w.Close()
	// Damage the middle of the second records frame (skip its frame and
	// block headers) and check each position separately.
	start, end := bounds[0], bounds[1]
	for off := start + 12; off < end-8; off += (end - start) / 10 {
		data := bytes.Clone(buf.Bytes())
		data[off] ^= 0x55
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for r.Scan() {
		}
		if r.Err() == nil {
			t.Errorf("byte %d flipped: no error (truncated=%v)", off, r.Truncated())
		}
	}
}

// fullDisk accepts limit bytes, then fails like a full disk, keeping what
// it accepted (a partial last write, as a real short write leaves).
type fullDisk struct {
	buf   bytes.Buffer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	room := d.limit - d.buf.Len()
	if room >= len(p) {
		return d.buf.Write(p)
	}
	d.buf.Write(p[:max(room, 0)])
	return max(room, 0), &os.PathError{Op: "write", Path: "x.trace.zst", Err: syscall.ENOSPC}
}

func TestFullDisk(t *testing.T) {
	recs := synthRun(synthConfig{Requests: 40, Tokens: 64, Concurrency: 4, Seed: 8})
	disk := &fullDisk{limit: 3000}
	w, err := NewWriter(disk, synthHeader, WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	flushed := 0
	for i := range recs {
		if werr = w.Write(&recs[i]); werr != nil {
			break
		}
		if i%3 == 2 {
			if werr = w.Flush(); werr != nil {
				break
			}
			flushed = i + 1
		}
	}
	if werr == nil || !strings.Contains(werr.Error(), "no space left on device") {
		t.Fatalf("write error = %v, want one naming the full disk", werr)
	}
	if err := w.Write(&recs[0]); err == nil {
		t.Error("Write after a failed write succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write returned nil")
	}
	if st := w.Stats(); st.FlushedRecords != int64(flushed) {
		t.Errorf("Stats().FlushedRecords = %d, want %d", st.FlushedRecords, flushed)
	}
	_, got, r := readAll(t, disk.buf.Bytes())
	if r.Err() != nil {
		t.Fatalf("what reached the disk does not read: %v", r.Err())
	}
	if len(got) < flushed {
		t.Fatalf("read %d records, want the %d flushed before the disk filled", len(got), flushed)
	}
	if d := cmp.Diff(recs[:len(got)], got, cmpRecords); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestCreateMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-folder", "run.trace.zst")
	_, err := Create(path, synthHeader)
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v, want one saying the folder does not exist", err)
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := NewWriter(&bytes.Buffer{}, Header{}, WithFlushInterval(-time.Second)); err == nil {
		t.Error("negative flush interval accepted")
	}
	if _, err := NewWriter(&bytes.Buffer{}, Header{}, WithLevel(zstd.EncoderLevel(99))); err == nil {
		t.Error("unknown level accepted")
	}
}

// TestTimedFlush writes to a file and, without calling Flush, waits for the
// timer to make the records readable while the writer is still open.
func TestTimedFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.trace.zst")
	w, err := Create(path, synthHeader, WithFlushInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	recs := synthRun(synthConfig{Requests: 5, Tokens: 10, Concurrency: 5, Seed: 1})
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for w.Stats().FlushedRecords < int64(len(recs)) {
		if time.Now().After(deadline) {
			t.Fatalf("no timed flush within 5 s: %+v", w.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The open trace reads as cut short (the run is still going), with
	// every flushed record and the progress entry of the flush.
	r := openTest(t, path)
	n := 0
	for r.Scan() {
		n++
	}
	p, ok := r.Progress()
	if r.Err() != nil || !r.Truncated() || n != len(recs) || !ok || p.Records != int64(len(recs)) || p.Closed || p.Sent != -1 {
		t.Fatalf("read %d of %d records from the open trace; Err %v, Truncated %v, progress %+v %v", n, len(recs), r.Err(), r.Truncated(), p, ok)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, r2 := readAll(t, mustRead(t, path))
	if p, _ := r2.Progress(); r2.Truncated() || len(got) != len(recs) || !p.Closed {
		t.Fatalf("closed trace: %d records, Truncated %v, progress %+v", len(got), r2.Truncated(), p)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Write(&recs[0]); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConcurrentWrites(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex // guards buf against the test's own reads only
	w, err := NewWriter(lockedWriter{&mu, &buf}, synthHeader, WithFlushInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r := Record{ID: fmt.Sprintf("%d-%d", g, i), Chunks: []Chunk{{T: int64(i), Text: "x"}}}
				if err := w.Write(&r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if err := w.Flush(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, r := readAll(t, buf.Bytes())
	seen := map[string]bool{}
	for _, rec := range got {
		seen[rec.ID] = true
	}
	if len(got) != 400 || len(seen) != 400 || r.Err() != nil {
		t.Fatalf("read %d records (%d distinct), Err %v", len(got), len(seen), r.Err())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestZstdBomb feeds a small file that decompresses to gigabytes of
// skippable entries: the reader must refuse it quickly, not churn through it.
func TestZstdBomb(t *testing.T) {
	var raw bytes.Buffer
	raw.Write(rawStream(1, 0, "{}"))
	unknown := entry(nil, 9, make([]byte, 4096)) // an entry of a kind 1.0 skips
	raw.Write(bytes.Repeat(unknown, 16<<20/len(unknown)))
	data := compress(t, raw.Bytes())
	t.Logf("%d compressed bytes for %d decompressed", len(data), raw.Len())
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for r.Scan() {
	}
	if r.Err() == nil || !strings.Contains(r.Err().Error(), "bomb") {
		t.Fatalf("Err() = %v, want the bomb refused", r.Err())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}
