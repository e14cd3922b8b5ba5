package trace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Reader reads a trace one record at a time in constant memory:
//
//	r, err := trace.Open(path)
//	…
//	defer r.Close()
//	for r.Scan() {
//		rec := r.Record() // valid until the next Scan
//	}
//	if err := r.Err(); err != nil { … }
//	if r.Truncated() { /* the run was killed: say so */ }
//
// It reads every format version this package ever wrote (see ReadVersions)
// and refuses a newer major version with an error that says to upgrade.
// Memory stays bounded by the largest record, whatever the file's length.
// A Reader is for one goroutine at a time.
type Reader struct {
	file *os.File // nil for NewReader
	name string   // for errors
	zr   *zstd.Decoder
	br   *bufio.Reader

	h     Header
	major int
	minor int

	v1  v1Decoder
	buf []byte
	rec *Record

	// withScrapes makes Scan stop at scrape entries too (IncludeScrapes);
	// scrape is the current one, scrapes counts those seen either way.
	withScrapes bool
	scrape      *Scrape
	scrapeBuf   Scrape
	scrapes     int

	err       error
	truncated bool
	skipped   int   // undecodable entries passed over (Skipped)
	skipErr   error // the first one's problem
	done      bool

	// shard is the index of the last shard entry (1.1, merged traces).
	shard    int
	hasShard bool

	// progress is the latest progress entry (1.6), seen whether one was;
	// records counts the record entries read, to hold against its count.
	progress    Progress
	hasProgress bool
	records     int64
	// ids holds a hash of every measured record's id read so far: a record
	// whose id repeats one is a repeated stretch of the file (a duplicated
	// frame or block), skipped.
	ids  map[uint64]struct{}
	seed maphash.Seed
}

// Open opens the trace file at path and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	r, err := newReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads a trace from in and reads its header. Close does not
// close in.
func NewReader(in io.Reader) (*Reader, error) {
	return newReader(in, "")
}

// zstd frames start with this magic; skippable frames (which other tools
// may add) with 0x184D2A50…0x184D2A5F.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func isZstd(p []byte) bool {
	return bytes.Equal(p, zstdMagic) || (p[0]&0xf0 == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18)
}

func newReader(in io.Reader, name string) (*Reader, error) {
	r := &Reader{name: name, ids: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
	cin := &countingReader{r: in}
	raw := bufio.NewReaderSize(cin, 64<<10)
	p, err := raw.Peek(4)
	if len(p) == 0 && err == io.EOF {
		return nil, r.errorf("the file is empty: not a trace (was the run killed before it started?)")
	}
	if len(p) < 4 || !isZstd(p) {
		if err != nil && err != io.EOF {
			return nil, r.errorf("%v", err)
		}
		return nil, r.errorf("not an llmreplay trace: it is not zstd-compressed (traces are the NAME.trace.zst files replay writes)")
	}
	zr, err := zstd.NewReader(raw,
		// Synchronous decoding: no goroutines, memory bounded by one window.
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxWindow),
	)
	if err != nil {
		return nil, r.errorf("%v", err)
	}
	r.zr = zr
	r.br = bufio.NewReaderSize(&bombGuard{r: zr, in: cin}, 64<<10)
	if err := r.readHeader(); err != nil {
		zr.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) errorf(format string, a ...any) error {
	if r.name == "" {
		return fmt.Errorf("trace: "+format, a...)
	}
	return fmt.Errorf("trace: %s: %s", r.name, fmt.Sprintf(format, a...))
}

func (r *Reader) readHeader() error {
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(r.br, m); err != nil {
		if isTruncation(err) {
			return r.errorf("the file ends inside its header: the run was killed as it started, or the file was cut short")
		}
		return r.errorf("cannot decompress it (%v): the file is damaged or not a trace", err)
	}
	if string(m) != magic {
		if strings.HasPrefix("llmreplay-workload", string(m)) {
			return r.errorf("this is a workload file, not a trace: pass the .trace.zst file that replay wrote")
		}
		return r.errorf("not an llmreplay trace: its content starts with %q, not %q", m, magic)
	}
	major, err1 := binary.ReadUvarint(r.br)
	minor, err2 := binary.ReadUvarint(r.br)
	if err := errors.Join(err1, err2); err != nil {
		if isTruncation(err) {
			return r.errorf("the file ends inside its header: the run was killed as it started, or the file was cut short")
		}
		return r.errorf("reading the format version: %v", err)
	}
	if major > FormatMajor {
		return r.errorf("written by a newer llmreplay (trace format %d.%d); this build reads %s: upgrade llmreplay", major, minor, strings.Join(ReadVersions, ", "))
	}
	r.major, r.minor = int(major), int(minor)
	switch r.major {
	case 1:
		return r.readHeaderV1()
	default:
		return r.errorf("trace format %d.%d was never written by any llmreplay: the file is corrupt", major, minor)
	}
}

// readHeaderV1 reads the 1.x header: a length and that much JSON. Unknown
// JSON fields (added by later minor versions) are ignored.
func (r *Reader) readHeaderV1() error {
	n, err := binary.ReadUvarint(r.br)
	if err == nil && n > maxHeaderBytes {
		return r.errorf("header length %d exceeds the %d-byte limit: the file is corrupt", n, maxHeaderBytes)
	}
	var js []byte
	if err == nil {
		js, err = r.readBody(int(n))
	}
	if err != nil {
		if isTruncation(err) {
			return r.errorf("the file ends inside its header: the run was killed as it started, or the file was cut short")
		}
		return r.errorf("reading the header: %v", err)
	}
	if err := json.Unmarshal(js, &r.h); err != nil {
		return r.errorf("the header is not valid JSON (%v): the file is corrupt", err)
	}
	r.h.Format, r.h.Major, r.h.Minor = FormatName, r.major, r.minor
	return nil
}

// countingReader counts the compressed bytes read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// bombGuard refuses a stream that decompresses to far more than any trace
// does. A zstd "bomb" of a few KiB can expand to terabytes: streaming keeps
// memory constant, but the reader would spend minutes skipping entries or
// returning copies of one record. Real traces compress 5–50×: every record
// has its own timestamps.
type bombGuard struct {
	r   io.Reader
	in  *countingReader
	out int64
}

const (
	bombRatio = 1000
	bombFloor = 8 << 20 // decompressed bytes before the ratio is checked
)

func (g *bombGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.out += int64(n)
	if g.out > bombFloor && g.out > bombRatio*g.in.n {
		return n, fmt.Errorf("the data decompresses to over %d times its size (%d bytes from %d): not a trace llmreplay wrote (a zstd bomb?)", bombRatio, g.out, g.in.n)
	}
	return n, err
}

// isTruncation reports whether err means the data simply stopped: what a
// killed writer leaves behind, as opposed to bytes that are wrong.
func isTruncation(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// readBody reads n bytes into the reused buffer. A large n grows the buffer
// only as fast as data actually arrives, so a corrupt length field costs at
// most what the file really holds (and never more than maxEntryBytes).
func (r *Reader) readBody(n int) ([]byte, error) {
	if n <= cap(r.buf) {
		b := r.buf[:n]
		_, err := io.ReadFull(r.br, b)
		return b, err
	}
	b := r.buf[:0]
	for len(b) < n {
		step := min(n-len(b), max(len(b), 1<<20))
		if cap(b)-len(b) < step {
			nb := make([]byte, len(b), len(b)+step)
			copy(nb, b)
			b = nb
		}
		m, err := io.ReadFull(r.br, b[len(b):len(b)+step])
		b = b[:len(b)+m]
		if err != nil {
			r.buf = b
			return nil, err
		}
	}
	r.buf = b
	return b, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.h }

// Version returns the format version the file was written in.
func (r *Reader) Version() (major, minor int) { return r.major, r.minor }

// Scan advances to the next record (and, after IncludeScrapes, scrape). It
// returns false at the end of the trace, at a truncated tail (Truncated
// reports it) or on an error (Err).
func (r *Reader) Scan() bool {
	r.rec = nil
	r.scrape = nil
	if r.err != nil || r.done {
		return false
	}
	for {
		if p, _ := r.br.Peek(len(magic)); len(p) == len(magic) && string(p) == magic {
			// Where an entry should start, a trace's preamble: two traces
			// joined into one file, or the first frame repeated. What
			// follows is not this trace's.
			return r.stop(fmt.Errorf("a second trace header follows record %d: the file is two traces joined, or a frame of it repeats; the records before it were read", r.records))
		}
		tag, err := binary.ReadUvarint(r.br)
		if err == io.EOF {
			r.done = true
			if r.minor >= 6 && !r.progress.Closed {
				// A 1.6 writer ends its trace with a closing progress
				// entry: without it the run was killed (or the copy is
				// short), even where the cut fell between two flushes.
				r.truncated = true
			}
			return false
		}
		var n uint64
		if err == nil {
			n, err = binary.ReadUvarint(r.br)
		}
		if err != nil {
			return r.stop(err)
		}
		if tag == 0 {
			return r.stop(errors.New("entry tag 0 is never written: the file is corrupt"))
		}
		if n > entryLimit {
			// No writer makes such an entry (Writer.bound). Skip it: the
			// records after it are still good if the length is (the bytes
			// are there), and a length that is not runs into the end.
			if n > maxSkipBytes {
				return r.stop(fmt.Errorf("an entry of %d bytes exceeds the %d-byte limit: the file is corrupt", n, maxEntryBytes))
			}
			r.skip(fmt.Errorf("an entry of %d bytes exceeds the %d-byte limit", n, entryLimit))
			if !r.discard(n) {
				return false
			}
			continue
		}
		if tag == tagShard {
			if n > binary.MaxVarintLen64 {
				return r.stop(fmt.Errorf("a shard entry of %d bytes holds no shard index: the file is corrupt", n))
			}
			b, ok := r.entry(n)
			if !ok {
				return false
			}
			v, k := binary.Uvarint(b)
			if k <= 0 || k != len(b) || v > 1<<31 {
				return r.stop(fmt.Errorf("a shard entry of %d bytes holds no shard index: the file is corrupt", n))
			}
			r.shard, r.hasShard = int(v), true
			continue
		}
		if tag == tagScrape {
			if !r.withScrapes {
				r.scrapes++
				if !r.discard(n) {
					return false
				}
				continue
			}
			b, ok := r.entry(n)
			if !ok {
				return false
			}
			if err := decodeScrapeV1(string(b), &r.scrapeBuf); err != nil {
				r.skip(fmt.Errorf("scrape %d: %v", r.scrapes+1, err))
				continue
			}
			r.scrapes++
			r.scrape = &r.scrapeBuf
			return true
		}
		if tag == tagProgress {
			if n > maxProgressBytes {
				r.skip(fmt.Errorf("a progress entry of %d bytes", n))
				if r.discard(n) {
					continue
				}
				return false
			}
			b, ok := r.entry(n)
			if !ok {
				return false
			}
			r.takeProgress(string(b))
			continue
		}
		if tag != tagRecord {
			// An entry kind from a later minor version: skip it.
			if !r.discard(n) {
				return false
			}
			continue
		}
		b, ok := r.entry(n)
		if !ok {
			return false
		}
		// One string per record: every text, ID and error of the record is
		// a slice of it, so chunks cost no allocation of their own, and a
		// caller may keep any of those strings after the next Scan.
		// Only major version 1 gets this far (readHeader refuses others);
		// a future major version adds its decoder here, and v1 stays.
		rec, err := r.v1.decode(string(b))
		if err != nil {
			// The entry's framing held (its length was right, the next
			// entry starts after it): skip this record, keep the others.
			r.records++
			r.skip(fmt.Errorf("record %d: %v", r.v1.count+r.skipped, err))
			continue
		}
		if !rec.Warmup && rec.ID != "" {
			// Warm-ups resend measured requests, ids and all.
			h := maphash.String(r.seed, rec.ID)
			if _, seen := r.ids[h]; seen {
				r.skip(fmt.Errorf("record %q appears twice (a repeated stretch of the file: a duplicated frame or block); the repeat is skipped", rec.ID))
				continue
			}
			r.ids[h] = struct{}{}
		}
		r.records++
		r.v1.count++
		if r.minor < 6 && r.h.Timestamps == TimestampsKernel {
			// Written before chunks were marked: chunks of one read share
			// its stamp, which is all the mark needs.
			MarkSharedReads(rec)
		}
		if r.hasShard {
			// A fresh int per record (merged traces only): a caller that
			// keeps a copy of the record keeps the shard it saw.
			v := r.shard
			rec.Shard = &v
		}
		r.rec = rec
		return true
	}
}

// takeProgress reads a progress entry (1.6) and holds it against the
// ones before it and the records read: entries out of turn, or a record
// count the writer's disagrees with, are a repeated or missing stretch of
// the file, said as skipped entries.
func (r *Reader) takeProgress(body string) {
	var p Progress
	if err := decodeProgressV1(body, &p); err != nil {
		r.skip(fmt.Errorf("progress entry: %v", err))
		return
	}
	switch {
	case r.progress.Closed:
		r.skip(fmt.Errorf("progress entry %d follows the trace's closing entry: a stretch of the file repeats", p.Seq))
	case p.Seq != r.progress.Seq+1:
		r.skip(fmt.Errorf("progress entry %d follows entry %d: a stretch of the file repeats or is missing", p.Seq, r.progress.Seq))
	case p.Records > r.records:
		r.skip(fmt.Errorf("%d records are missing before progress entry %d (the writer had written %d, the file holds %d)", p.Records-r.records, p.Seq, p.Records, r.records))
	case p.Records < r.records:
		r.skip(fmt.Errorf("%d records more than the writer had written by progress entry %d: a stretch of the file repeats", r.records-p.Records, p.Seq))
	}
	r.records = p.Records
	if r.progress.Closed && !p.Closed {
		p.Closed = true // what follows a close does not reopen the trace
	}
	r.progress, r.hasProgress = p, true
}

// Progress returns the latest progress entry read (1.6), and false for a
// trace that had none by then. After Scan returned false it is the
// trace's last: Closed says the writer closed the trace, else Sent (when
// known, ≥ 0) counts the requests sent by the last flush, T (ns on the
// run clock) when that was.
func (r *Reader) Progress() (Progress, bool) { return r.progress, r.hasProgress }

// discard passes over an entry's n bytes of body; false (with the tail
// or the error noted, as stop does) when the stream ends first.
func (r *Reader) discard(n uint64) bool {
	if _, err := r.br.Discard(int(n)); err != nil {
		return r.stop(noEOF(err))
	}
	return true
}

// entry reads an entry's n bytes of body; false (with the tail or the
// error noted, as stop does) when the stream ends first.
func (r *Reader) entry(n uint64) ([]byte, bool) {
	b, err := r.readBody(int(n))
	if err != nil {
		return nil, r.stop(noEOF(err))
	}
	return b, true
}

// noEOF turns a clean EOF inside an entry into ErrUnexpectedEOF: the stream
// stopped partway through something it had announced.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (r *Reader) stop(err error) bool {
	if isTruncation(err) {
		r.truncated = true
		r.done = true
		return false
	}
	r.err = r.errorf("%v", err)
	return false
}

// maxSkipBytes is the largest oversized entry Scan skips rather than
// stopping at: skipping reads (and decompresses) the bytes, and a larger
// length is a corrupt field, not an entry.
const maxSkipBytes = 4 << 30

// entryLimit is maxEntryBytes, a variable only so a test can skip an
// oversized entry without building a 256 MiB one.
var entryLimit uint64 = maxEntryBytes

func (r *Reader) skip(err error) {
	if r.skipped == 0 {
		r.skipErr = err
	}
	r.skipped++
}

// Skipped reports the entries Scan passed over because they could not be
// decoded (a damaged record between good ones), and the first one's
// problem. The records around them were returned.
func (r *Reader) Skipped() (n int, first error) { return r.skipped, r.skipErr }

// IncludeScrapes makes Scan stop at scrape entries (1.3) as well as at
// records: after each Scan, exactly one of Record and Scrape is non-nil.
// Without it Scan passes over scrapes (counting them, see Scrapes), so a
// caller that knows only records sees only records.
//
//	r.IncludeScrapes()
//	for r.Scan() {
//		if s := r.Scrape(); s != nil { … continue }
//		rec := r.Record()
//	}
func (r *Reader) IncludeScrapes() { r.withScrapes = true }

// Scrape returns the scrape Scan stopped at, or nil when it stopped at a
// record. It and its samples are reused by the next Scan; strings stay
// valid.
func (r *Reader) Scrape() *Scrape { return r.scrape }

// Scrapes is how many scrape entries Scan has passed so far, returned or
// not.
func (r *Reader) Scrapes() int { return r.scrapes }

// Record returns the record Scan read. It and everything it points to
// (chunks, error) are reused by the next Scan; strings stay valid.
func (r *Reader) Record() *Record { return r.rec }

// Err returns the first error other than a truncated tail.
func (r *Reader) Err() error { return r.err }

// Truncated reports whether the trace ended partway through: what a run
// killed before it closed its trace leaves. Every record before the cut was
// returned; callers should say that the tail is missing. A 1.6 trace is cut
// short unless it ends with the writer's closing progress entry, so a cut
// between two flushes is seen too (Progress says what was sent by then);
// an older one is cut short only where the cut fell inside a frame.
func (r *Reader) Truncated() bool { return r.truncated }

// Close releases the decoder and, for Open, closes the file.
func (r *Reader) Close() error {
	if r.zr != nil {
		r.zr.Close()
		r.zr = nil
	}
	if r.file != nil {
		err := r.file.Close()
		r.file = nil
		return err
	}
	return nil
}
