package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/llmreplay/llmreplay/internal/version"
)

// DefaultFlushInterval is how often a Writer makes what it has been given
// durable and decodable unless told otherwise: a crash loses at most this
// much of the run.
const DefaultFlushInterval = time.Second

// pendingLimit is how much compressed data a Writer holds before writing it
// out even between flushes. Holding a flush interval's worth in memory lets
// each flush reach the file in one write; the limit bounds memory when
// flushes are rare.
const pendingLimit = 1 << 20

// Option configures a Writer.
type Option func(*writerConfig) error

type writerConfig struct {
	flushInterval time.Duration
	level         zstd.EncoderLevel
	background    bool
	progress      func() (t, sent int64)
}

// WithBackgroundCompression compresses on a goroutine of its own while the
// caller encodes the next records: for batch writers (trace merge) whose
// wall time matters, never for a live run, where a spare core belongs to
// the timing loop.
func WithBackgroundCompression() Option {
	return func(c *writerConfig) error {
		c.background = true
		return nil
	}
}

// WithFlushInterval sets how often the Writer ends the current zstd block and
// writes it out, so that everything written so far decodes even if the
// process is killed. 0 turns timed flushes off (for in-memory writers and
// tests; Flush and Close still work).
func WithFlushInterval(d time.Duration) Option {
	return func(c *writerConfig) error {
		if d < 0 {
			return fmt.Errorf("trace: flush interval %v is negative: use a positive duration, or 0 for no timed flushes", d)
		}
		c.flushInterval = d
		return nil
	}
}

// WithLevel sets the zstd compression level (default zstd.SpeedDefault).
// Higher levels cost CPU on the machine that runs the replay.
func WithLevel(l zstd.EncoderLevel) Option {
	return func(c *writerConfig) error {
		if l < zstd.SpeedFastest || l > zstd.SpeedBestCompression {
			return fmt.Errorf("trace: zstd level %d is unknown: use one of zstd.SpeedFastest … zstd.SpeedBestCompression", l)
		}
		c.level = l
		return nil
	}
}

// Writer writes a trace as the run goes. Each flush writes a progress
// entry (1.6), ends the current zstd block and hands everything compressed
// so far to the underlying writer in one Write, so whatever was flushed
// decodes even if the process dies the next instant. The one frame a trace
// is ends only at Close, after the progress entry that says the trace is
// complete: blocks, unlike frames, keep the compressor's history, and a
// file cut anywhere, even between two flushes, ends inside the frame and
// reads as cut short. (Up to 1.5 each flush ended a frame: a quarter of a
// slow run's bytes went to relearning what the previous second had taught
// the compressor, and a kill between two flushes left a file that looked
// whole.)
//
// All methods are safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	out      io.Writer
	file     *os.File // nil for NewWriter
	name     string   // for errors
	enc      *zstd.Encoder
	pending  bytes.Buffer // compressed bytes not yet handed to out
	body     []byte       // reused record encoding buffer
	dirty    bool         // entries written since the last flush
	err      error        // sticky: the first write error
	closed   bool
	shard    int      // shard of the last shard entry written, -1 for none
	syncFile *os.File // file, when fsync means something for it

	records        int64
	scrapes        int64
	flushedRecords int64
	written        int64         // compressed bytes handed to out
	raw            int64         // bytes given to the encoder (what a reader decompresses)
	rawAtBlock     int64         // raw when the encoder last emitted everything (Flush, frame end)
	scratch        *zstd.Encoder // sizes a large record's compressed form (see bound)
	clipped        int64         // records clipped so far

	// progress reads the run's clock and sends (WithProgress); seq and
	// sent are the last progress entry's.
	progress func() (t, sent int64)
	seq      int64
	sent     int64

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// WriterStats counts what a Writer has done so far.
type WriterStats struct {
	Records        int64 // records given to Write
	FlushedRecords int64 // records that a crash can no longer lose
	Bytes          int64 // compressed bytes written out
	Clipped        int64 // records whose text the writer cut (see Record.Clipped)
	Scrapes        int64 // scrapes given to WriteScrape
}

// Create creates (or truncates) the trace file at path and writes its header.
// The file is written in place, not renamed at the end, because a run that
// is killed must leave what it recorded where the user expects it.
func Create(path string, h Header, opts ...Option) (*Writer, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("trace: folder %s does not exist: create it first or write the trace elsewhere", dir)
		}
		return nil, fmt.Errorf("trace: %v", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("trace: %s is not a folder: write the trace elsewhere", dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	// fsync is for regular files; on a device or pipe (-o /dev/null) it
	// fails with EINVAL although every byte was written.
	var syncFile *os.File
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		syncFile = f
	}
	w, err := newWriter(f, path, h, opts, f, syncFile)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes a trace to out. Close does not close out.
func NewWriter(out io.Writer, h Header, opts ...Option) (*Writer, error) {
	return newWriter(out, "the trace", h, opts, nil, nil)
}

// newWriter takes the file (and the file to fsync) before it starts the
// flush goroutine, which reads them: set afterwards they would race it.
func newWriter(out io.Writer, name string, h Header, opts []Option, file, syncFile *os.File) (*Writer, error) {
	cfg := writerConfig{flushInterval: DefaultFlushInterval, level: zstd.SpeedDefault}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	w := &Writer{out: out, name: name, shard: -1, file: file, syncFile: syncFile, progress: cfg.progress, sent: -1}
	conc := 1
	if cfg.background {
		conc = 2
	}
	enc, err := zstd.NewWriter(&w.pending,
		zstd.WithEncoderConcurrency(conc),
		zstd.WithEncoderLevel(cfg.level),
		zstd.WithWindowSize(4<<20),
	)
	if err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	w.enc = enc

	h.Format = FormatName
	h.Major = FormatMajor
	h.Minor = FormatMinor
	if h.ToolVersion == "" {
		h.ToolVersion = version.Tool
	}
	js, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("trace: encoding the header: %v", err)
	}
	b := []byte(magic)
	b = binary.AppendUvarint(b, FormatMajor)
	b = binary.AppendUvarint(b, FormatMinor)
	b = binary.AppendUvarint(b, uint64(len(js)))
	b = append(b, js...)
	w.mu.Lock()
	_, err = w.enc.Write(b)
	w.raw += int64(len(b))
	w.dirty = true
	if err == nil {
		// The header is written out at once: a run killed in its first
		// second still leaves a file that says what it was.
		err = w.flushLocked(false)
	}
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if cfg.flushInterval > 0 {
		w.stop = make(chan struct{})
		w.done = make(chan struct{})
		go w.flushLoop(cfg.flushInterval)
	}
	return w, nil
}

func (w *Writer) flushLoop(d time.Duration) {
	defer close(w.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			// A failed timed flush is sticky and reported by the next
			// Write, Flush or Close: the caller owns the error.
			_ = w.Flush()
		}
	}
}

// Write adds one record. It encodes and compresses in the caller's
// goroutine (a few microseconds for a typical record); the replay engine
// calls it from its trace goroutine, off the timing path.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: Write after Close")
	}
	var hdr [1 + binary.MaxVarintLen64]byte
	if r.Shard != nil && *r.Shard != w.shard {
		// A shard entry only where the shard changes: a merged trace's
		// records come in runs from one shard.
		if *r.Shard < 0 {
			return fmt.Errorf("trace: record %s has shard %d: shard indices start at 0", r.ID, *r.Shard)
		}
		e := append(hdr[:0], tagShard, 0)
		e = binary.AppendUvarint(e, uint64(*r.Shard))
		e[1] = byte(len(e) - 2) // a uvarint is at most 10 bytes: one length byte
		if _, err := w.enc.Write(e); err != nil {
			return w.fail(err)
		}
		w.raw += int64(len(e))
		w.shard = *r.Shard
	}
	// Entry: tag, body length, body. The body is encoded first so its
	// length is known; the buffer is reused across records.
	w.body = appendRecordV1(w.body[:0], r)
	if cp, ok := w.bound(r); ok {
		w.body = appendRecordV1(w.body[:0], cp)
	}
	if err := w.writeEntry(tagRecord); err != nil {
		return err
	}
	w.records++
	return nil
}

// writeEntry writes w.body as an entry of kind tag: the tag, the body's
// length, the body. Full compressed blocks are handed out as they fill;
// the entries in them count as flushed only when the frame ends.
func (w *Writer) writeEntry(tag byte) error {
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = tag
	n := 1 + binary.PutUvarint(hdr[1:], uint64(len(w.body)))
	if _, err := w.enc.Write(hdr[:n]); err != nil {
		return w.fail(err)
	}
	if _, err := w.enc.Write(w.body); err != nil {
		return w.fail(err)
	}
	w.raw += int64(n + len(w.body))
	w.dirty = true
	if w.pending.Len() >= pendingLimit {
		return w.writePending()
	}
	return nil
}

// WriteScrape adds one scrape (1.3), after the records written so far. A
// scrape with more than MaxScrapeSamples samples keeps the first ones and
// counts the rest in Dropped; names and labels past 4 KiB are cut. It is
// safe to call from a scraping goroutine while another writes records.
func (w *Writer) WriteScrape(s *Scrape) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("trace: WriteScrape after Close")
	}
	if len(s.Samples) > MaxScrapeSamples {
		c := *s
		c.Dropped += len(s.Samples) - MaxScrapeSamples
		c.Samples = s.Samples[:MaxScrapeSamples]
		s = &c
	}
	w.body = appendScrapeV1(w.body[:0], s)
	if err := w.writeEntry(tagScrape); err != nil {
		return err
	}
	w.scrapes++
	return nil
}

// The writer never writes what its reader refuses. The reader takes an
// entry of at most maxEntryBytes and stops a stream that decompresses to
// more than bombRatio times its size once past bombFloor (a zstd bomb); a
// hostile server can trip either with one response (70 events of 3.9 MB, or
// 12 MB of one repeated character). So a record is kept well inside both,
// with a factor 2 (entry) and 4 (ratio) of margin: its text is cut, its
// times and counts never, and Record.Clipped says how many bytes went.
const (
	// maxRecordText is the text (and reasoning) a record keeps: 32 MiB is
	// about 8 million tokens, far past any answer a replay asks for.
	maxRecordText = 32 << 20
	// maxRecordChunks bounds the chunk columns (a few bytes per chunk)
	// so an entry stays under maxEntryBytes/2 whatever its text.
	maxRecordChunks = 4 << 20
	// sizeByCompressing: a record's body above this is compressed on its
	// own to learn what it adds to the file; below it, the file's size so
	// far is a close enough guide, and costs nothing.
	sizeByCompressing = 256 << 10
	// blockEvery is how much input may wait in the encoder before the
	// bomb check ends a block to learn its compressed size.
	blockEvery = 1 << 20
)

// bound returns a clipped copy of r whose entry every reader accepts, and
// whether one was needed (w.body, r's encoding, must then be redone from
// the copy). r itself is never changed: a caller may reuse it, and sinks
// after the trace file see what the server sent.
func (w *Writer) bound(orig *Record) (*Record, bool) {
	budget := maxRecordText
	if raw := w.raw + int64(len(w.body)); raw > bombFloor/2 {
		// The encoder holds input it has not compressed yet (up to its
		// window): ending the block every MiB makes the compressed size
		// exact for all but the last MiB, so a trace that compresses
		// 25× is not taken for a bomb because its output lags.
		if w.raw-w.rawAtBlock > blockEvery {
			if err := w.enc.Flush(); err == nil {
				w.rawAtBlock = w.raw
			}
		}
		comp := w.written + int64(w.pending.Len())
		if len(w.body) > sizeByCompressing {
			if w.scratch == nil {
				w.scratch, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(4<<20))
			}
			comp += int64(len(w.scratch.EncodeAll(w.body, nil)))
		}
		if raw > bombRatio/4*max(comp, 1) {
			// This record would make the file look like a zstd bomb (a
			// server repeating itself): keep none of its text.
			budget = 0
		}
	}
	if len(orig.Chunks) <= maxRecordChunks && textBytes(orig) <= budget {
		return nil, false // the common case: nothing copied
	}
	cp := *orig
	cp.Chunks = append([]Chunk(nil), orig.Chunks...)
	r := &cp
	if len(r.Chunks) > maxRecordChunks {
		// Chunks past the bound are dropped, their text counted as cut;
		// the last chunk kept gets the dropped chunks' wire bytes so the
		// response's byte total stays true.
		extra := 0
		for i := maxRecordChunks; i < len(r.Chunks); i++ {
			c := &r.Chunks[i]
			r.Clipped += int64(len(c.Text) + len(c.Reasoning))
			extra += c.Bytes - len(c.Text) - len(c.Reasoning)
		}
		r.Chunks = r.Chunks[:maxRecordChunks]
		r.Chunks[maxRecordChunks-1].Bytes += extra
		r.Notes = joinNote(r.Notes, fmt.Sprintf("the trace keeps the first %d chunks", maxRecordChunks))
	}
	if textBytes(r) > budget {
		clipText(r, budget)
	}
	w.clipped++
	return r, true
}

func textBytes(r *Record) int {
	n := 0
	for i := range r.Chunks {
		n += len(r.Chunks[i].Text) + len(r.Chunks[i].Reasoning)
	}
	return n
}

// clipText keeps the first budget bytes of r's text and reasoning, in
// chunk order, cut at a UTF-8 boundary, and counts the rest in r.Clipped.
// Each chunk's Bytes (wire bytes) is left as it was.
func clipText(r *Record, budget int) {
	keep := func(s string) string {
		if len(s) <= budget {
			budget -= len(s)
			return s
		}
		cut := budget
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		r.Clipped += int64(len(s) - cut)
		budget = 0
		return s[:cut]
	}
	for i := range r.Chunks {
		c := &r.Chunks[i]
		c.Text = keep(c.Text)
		c.Reasoning = keep(c.Reasoning)
	}
	r.Notes = joinNote(r.Notes, fmt.Sprintf("%d bytes of text are not kept", r.Clipped))
}

func joinNote(notes, n string) string {
	if notes == "" {
		return n
	}
	return notes + "; " + n
}

// Flush ends the current zstd frame and writes it out, then asks the
// operating system to put the file on disk. After Flush returns, every
// record written before it survives a crash of the process.
func (w *Writer) Flush() error {
	w.mu.Lock()
	err := w.flushLocked(false)
	f := w.syncFile
	w.mu.Unlock()
	if err != nil {
		return err
	}
	if f != nil {
		// Outside the lock: fsync can take milliseconds and Write need not
		// wait for it. SIGKILL cannot lose data the kernel already has, so
		// this only matters for power loss.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			return w.setErr(err)
		}
	}
	return nil
}

// flushLocked writes a progress entry and hands out everything written so
// far: at the end of a block, or, when closing, at the end of the frame
// after a progress entry marked closed. A timed flush with no new entry
// and no new send writes nothing.
func (w *Writer) flushLocked(closing bool) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	p := Progress{Sent: -1, Records: w.records, Closed: closing}
	if w.progress != nil {
		p.T, p.Sent = w.progress()
	}
	if !w.dirty && !closing && p.Sent == w.sent {
		return nil
	}
	w.seq++
	p.Seq = w.seq
	w.sent = p.Sent
	w.body = appendProgressV1(w.body[:0], &p)
	if err := w.writeEntry(tagProgress); err != nil {
		return err
	}
	var err error
	if closing {
		err = w.enc.Close()
	} else {
		err = w.enc.Flush()
	}
	if err != nil {
		return w.fail(err)
	}
	w.rawAtBlock = w.raw
	w.dirty = false
	n := w.records
	if err := w.writePending(); err != nil {
		return err
	}
	w.flushedRecords = n
	return nil
}

func (w *Writer) writePending() error {
	if w.pending.Len() == 0 {
		return nil
	}
	n, err := w.out.Write(w.pending.Bytes())
	w.written += int64(n)
	if err == nil && n < w.pending.Len() {
		err = io.ErrShortWrite
	}
	w.pending.Reset()
	if err != nil {
		return w.fail(err)
	}
	return nil
}

// fail records the first error; the Writer refuses all later writes,
// because bytes after a failed write would land after a hole.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		// The OS error names the file again ("write PATH: no space left on
		// device"): keep only its cause, the message names the file once.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		w.err = fmt.Errorf("trace: writing %s: %w (records flushed before this error stay readable)", w.name, err)
	}
	return w.err
}

func (w *Writer) setErr(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fail(err)
}

// Stats reports what the Writer has done so far.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return WriterStats{Records: w.records, FlushedRecords: w.flushedRecords, Bytes: w.written, Clipped: w.clipped, Scrapes: w.scrapes}
}

// Close writes the progress entry that marks the trace complete, ends the
// zstd frame, stops the flush timer and, for Create, closes the file. It
// returns the first error the Writer met, if any; after one the trace has
// no closing entry and reads as cut short, which it is.
func (w *Writer) Close() error {
	if w.stop != nil {
		w.stopOnce.Do(func() {
			close(w.stop)
			<-w.done
		})
	}
	w.mu.Lock()
	if w.closed {
		defer w.mu.Unlock()
		return w.err
	}
	err := w.flushLocked(true)
	w.closed = true // no entry may follow the closing one
	f := w.syncFile
	w.mu.Unlock()
	if err == nil && f != nil {
		// Outside the lock, as in Flush.
		if serr := f.Sync(); serr != nil && !errors.Is(serr, os.ErrClosed) {
			err = w.setErr(serr)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.scratch != nil {
		w.scratch.Close()
	}
	if w.file != nil {
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = w.fail(cerr)
		}
	}
	if err == nil {
		err = w.err
	}
	return err
}
