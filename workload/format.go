package workload

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/llmreplay/llmreplay/internal/atomicfile"
	"github.com/llmreplay/llmreplay/internal/filekind"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// The file is zstd-compressed text:
//
//	llmreplay-workload 1.0\n      magic and version
//	{header JSON}\n
//	{request JSON}\n              one line per request, Header.Requests of them
//
// docs/WORKLOAD_FORMAT.md is the specification.

// Limits that keep a hostile or corrupt file from exhausting memory.
const (
	// MaxLineBytes caps one decompressed line (a 1M-token prompt is ~7 MB).
	MaxLineBytes = 64 << 20
	// MaxRequests caps the request count a header may announce.
	MaxRequests = 10_000_000
	// maxWindow caps the zstd window the decoder will allocate; our own
	// encoder uses 8 MiB at most.
	maxWindow = 32 << 20
)

// encoderOptions are fixed so that the same workload compresses to the
// same bytes on every machine: one goroutine, a pinned level and window,
// no dependence on the number of CPUs.
func encoderOptions() []zstd.EOption {
	return []zstd.EOption{
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(8 << 20),
		zstd.WithEncoderCRC(true),
		zstd.WithZeroFrames(false),
		zstd.WithLowerEncoderMem(false),
	}
}

// minorFor is the oldest minor version that can carry h: 1.3 only when a
// phase replays a log's sessions (context "log"), 1.2 only when it
// has sessions or a system prompt, 1.1 only when it records a tokenizer
// path.
func minorFor(h Header) int {
	for _, p := range h.Phases {
		if p.Context != "" {
			return 3
		}
	}
	if h.Params.Turns != "" || h.Params.SystemTokens > 0 {
		return 2
	}
	if h.TokenizerPath != "" {
		return 1
	}
	return 0
}

// Tokenizer recalls the tokenizer wl was built with (tokenize.Recall), or
// loads override instead when it is set. source is the file used, "" for a
// built-in encoding.
func Tokenizer(h Header, override string) (tok tokenize.Tokenizer, source string, err error) {
	return tokenize.Recall(h.Tokenizer, h.TokenizerPath, h.TokenizerDigest, override)
}

// magicLine is the first line of the decompressed content.
func magicLine(major, minor int) string {
	return fmt.Sprintf("%s %d.%d\n", FormatName, major, minor)
}

// writeContent writes the canonical uncompressed content.
func writeContent(w io.Writer, wl *Workload) error {
	h := wl.Header
	h.Format, h.Major, h.Minor = FormatName, FormatMajor, minorFor(h)
	h.Requests = len(wl.Requests)
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := io.WriteString(bw, magicLine(h.Major, h.Minor)); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	// Prompts are plain text; keep "<", ">" and "&" readable for jq users.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&h); err != nil {
		return fmt.Errorf("encoding workload header: %w", err)
	}
	for i := range wl.Requests {
		if err := enc.Encode(&wl.Requests[i]); err != nil {
			return fmt.Errorf("encoding request %d: %w", i, err)
		}
	}
	return bw.Flush()
}

// Encode writes wl to w as a compressed workload file. The same workload
// always gives the same bytes.
func Encode(w io.Writer, wl *Workload) error {
	zw, err := zstd.NewWriter(w, encoderOptions()...)
	if err != nil {
		return fmt.Errorf("zstd encoder: %w", err)
	}
	if err := writeContent(zw, wl); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}

// Create writes wl to path atomically: on any error no file is left.
func Create(path string, wl *Workload) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	// Temporary files are private; a workload is meant to be shared.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := Encode(f, wl); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// Digest is "sha256:<hex>" of wl's canonical uncompressed content. It does
// not depend on compression, so a trace can name the workload it replayed
// however the file was stored. Fields added in later minor versions are
// omitted when empty, so an old file's digest does not change when it is
// read by a newer build.
func Digest(wl *Workload) string {
	h := sha256.New()
	if err := writeContent(h, wl); err != nil {
		// writeContent fails only on values JSON cannot encode (NaN rates),
		// which Build never makes; name the problem rather than hash garbage.
		return "sha256:invalid (" + err.Error() + ")"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Open reads the workload file at path.
func Open(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open workload: %w", err)
	}
	defer f.Close()
	wl, err := Decode(f)
	if err != nil {
		if m, ok := err.(*filekind.Mismatch); ok {
			m.Path = path
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return wl, nil
}

// OpenArg reads the workload a command line names: a file's path, or "-"
// for stdin, whose errors say "stdin" where a file's name its path.
func OpenArg(arg string, stdin io.Reader) (*Workload, error) {
	if arg != "-" {
		return Open(arg)
	}
	wl, err := Decode(stdin)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return wl, nil
}

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Decode reads a workload file. It accepts every format version this tool
// has written (1.x), refuses newer major versions by name, and reports
// corrupt or truncated input as an error, never a panic.
func Decode(r io.Reader) (*Workload, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(4)
	if err != nil || !bytes.Equal(head, zstdMagic) {
		if len(head) == 0 {
			return nil, errors.New("not a workload file: it is empty")
		}
		if more, _ := br.Peek(512); filekind.OfRaw(more) != filekind.Other {
			return nil, &filekind.Mismatch{Got: filekind.OfRaw(more), Want: filekind.Workload}
		}
		return nil, errors.New("not a workload file: it is not zstd-compressed (workload files are NAME.workload.zst, made by 'llmreplay workload build')")
	}
	zr, err := zstd.NewReader(br,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxWindow),
		zstd.WithDecoderLowmem(true),
	)
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	defer zr.Close()
	zbr := bufio.NewReaderSize(zr, 1<<16)
	// A trace (or a tokenizer.json.zst) given for a workload is named for
	// what it is, with the command that takes it.
	if inner, _ := zbr.Peek(len(FormatName)); len(inner) > 0 {
		if k := filekind.OfContent(inner); k == filekind.Trace || k == filekind.JSON {
			return nil, &filekind.Mismatch{Got: k, Want: filekind.Workload}
		}
	}
	d := &lineReader{r: zbr}

	line, err := d.next()
	if err != nil {
		return nil, d.wrap(err, "reading the version line")
	}
	major, minor, err := parseMagic(line)
	if err != nil {
		return nil, err
	}
	line, err = d.next()
	if err != nil {
		return nil, d.wrap(err, "reading the header")
	}
	wl := &Workload{}
	if err := json.Unmarshal(line, &wl.Header); err != nil {
		return nil, fmt.Errorf("corrupt workload file: header: %v", err)
	}
	h := &wl.Header
	if h.Format != FormatName || h.Major != major || h.Minor != minor {
		return nil, fmt.Errorf("corrupt workload file: header says %s %d.%d but the version line says %s %d.%d", h.Format, h.Major, h.Minor, FormatName, major, minor)
	}
	if h.Requests < 0 || h.Requests > MaxRequests {
		return nil, fmt.Errorf("corrupt workload file: header announces %d requests (at most %d are supported)", h.Requests, MaxRequests)
	}
	for i := range h.Phases {
		if h.Phases[i].Index != i {
			return nil, fmt.Errorf("corrupt workload file: phase %d has index %d", i, h.Phases[i].Index)
		}
		if err := validatePhase(&h.Phases[i]); err != nil {
			return nil, fmt.Errorf("corrupt workload file: %w (rebuild it with 'llmreplay workload build')", err)
		}
	}
	// Grow as lines arrive rather than trusting the header's count.
	wl.Requests = make([]Request, 0, min(h.Requests, 1<<16))
	turns := newTurnCheck(len(h.Phases))
	for len(wl.Requests) < h.Requests {
		line, err := d.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("truncated workload file: %d of %d requests present", len(wl.Requests), h.Requests)
			}
			return nil, d.wrap(err, fmt.Sprintf("reading request %d of %d", len(wl.Requests)+1, h.Requests))
		}
		var req Request
		if err := json.Unmarshal(line, &req); err != nil {
			return nil, fmt.Errorf("corrupt workload file: request %d (line %d): %v", len(wl.Requests)+1, d.lines, err)
		}
		// Check each request as it arrives, so a compressed stream of
		// empty objects cannot make the decoder allocate millions of them.
		if err := validateRequest(wl, &req); err != nil {
			return nil, fmt.Errorf("corrupt workload file: %w", err)
		}
		if err := turns.add(wl, &req); err != nil {
			return nil, fmt.Errorf("corrupt workload file: %w", err)
		}
		wl.Requests = append(wl.Requests, req)
	}
	if err := turns.done(wl); err != nil {
		return nil, fmt.Errorf("corrupt workload file: %w", err)
	}
	// Anything after the last request means the header and body disagree.
	if _, err := d.next(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, d.wrap(err, "reading past the last request")
		}
		return nil, fmt.Errorf("corrupt workload file: more lines than the %d requests the header announces", h.Requests)
	}
	return wl, nil
}

// validateRequest checks what the replay relies on, so that a file edited
// by hand fails here with a clear message rather than later with a panic.
func validateRequest(wl *Workload, r *Request) error {
	if r.Phase < 0 || r.Phase >= len(wl.Header.Phases) {
		return fmt.Errorf("request %q names phase %d of %d", r.ID, r.Phase, len(wl.Header.Phases))
	}
	if (r.Prompt == "") == (len(r.Messages) == 0) {
		return fmt.Errorf("request %q must have exactly one of prompt and messages", r.ID)
	}
	text := r.Prompt
	if len(r.Messages) > 0 {
		text = r.Messages[len(r.Messages)-1].Content
	}
	if s := r.Salt; s.Words != 0 || s.Start != 0 || s.End != 0 {
		if s.Words < 0 || s.Start < 0 || s.End < s.Start || s.End > len(text) {
			return fmt.Errorf("request %q has a salt span [%d,%d) outside its %d-byte prompt", r.ID, s.Start, s.End, len(text))
		}
		// Each salt word is a space and at least one byte: more words than
		// the span has bytes is an edited file, and the replay would build
		// a salt of that many words (2e9 words ran out of memory).
		if s.Words > s.End-s.Start {
			return fmt.Errorf("request %q has %d salt words in a %d-byte salt span", r.ID, s.Words, s.End-s.Start)
		}
	}
	if r.InputTokens < 0 || r.MaxTokens < 0 || r.Offset < 0 {
		return fmt.Errorf("request %q has a negative count or offset", r.ID)
	}
	if r.InputTokens > MaxInputTokens || r.MaxTokens > MaxOutputTokens {
		return fmt.Errorf("request %q asks for %d input and %d output tokens (at most %d and %d)", r.ID, r.InputTokens, r.MaxTokens, MaxInputTokens, MaxOutputTokens)
	}
	return nil
}

// validatePhase checks a phase's numbers against their meaning, so a file
// edited by hand cannot make the replay start 10^8 goroutines or
// connections (a burst phase of concurrency 100,000,000 used 3 GB in 15 s).
func validatePhase(p *Phase) error {
	switch {
	case p.Requests < 0 || p.Requests > MaxRequests:
		return fmt.Errorf("phase %d announces %d requests (0 to %d)", p.Index, p.Requests, MaxRequests)
	case p.Concurrency < 0 || p.Concurrency > maxLevel:
		return fmt.Errorf("phase %d has concurrency %d (0 to %d)", p.Index, p.Concurrency, maxLevel)
	case p.Kind == KindBurst && p.Concurrency > p.Requests:
		return fmt.Errorf("phase %d is a burst of %d requests with concurrency %d: a burst's concurrency is at most its requests", p.Index, p.Requests, p.Concurrency)
	case p.InputTokens < 0 || p.InputTokens > MaxInputTokens || p.MaxTokens < 0 || p.MaxTokens > MaxOutputTokens:
		return fmt.Errorf("phase %d has %d input / %d max tokens (at most %d / %d)", p.Index, p.InputTokens, p.MaxTokens, MaxInputTokens, MaxOutputTokens)
	case p.Sessions < 0 || p.Sessions > p.Requests:
		return fmt.Errorf("phase %d has %d sessions for %d requests (0 to its requests)", p.Index, p.Sessions, p.Requests)
	case p.Context != "" && p.Context != ContextLog:
		return fmt.Errorf("phase %d has context %q (\"\" or %q)", p.Index, p.Context, ContextLog)
	case p.Context != "" && p.Sessions == 0 && p.Requests > 0:
		// (a shard may hold none of a phase's sessions, and no requests)
		return fmt.Errorf("phase %d has context %q but no sessions", p.Index, p.Context)
	case !(p.Rate >= 0 && p.Rate <= maxRate):
		return fmt.Errorf("phase %d has rate %v (0 to %v requests per second)", p.Index, p.Rate, maxRate)
	}
	return nil
}

func parseMagic(line []byte) (major, minor int, err error) {
	s := string(line)
	rest, ok := strings.CutPrefix(s, FormatName+" ")
	if !ok {
		return 0, 0, errors.New("not a workload file: zstd-compressed, but it does not start with the llmreplay-workload magic line")
	}
	maj, min, ok := strings.Cut(rest, ".")
	major, err1 := strconv.Atoi(maj)
	minor, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, fmt.Errorf("corrupt workload file: bad version %q in the magic line", rest)
	}
	if major > FormatMajor {
		return 0, 0, fmt.Errorf("written by a newer llmreplay (workload format %d.%d); this build reads %s: upgrade llmreplay", major, minor, strings.Join(ReadVersions, ", "))
	}
	if major != FormatMajor {
		return 0, 0, fmt.Errorf("unsupported workload format %d.%d; this build reads %s", major, minor, strings.Join(ReadVersions, ", "))
	}
	return major, minor, nil
}

// lineReader yields newline-terminated lines of bounded length.
type lineReader struct {
	r     *bufio.Reader
	buf   []byte
	lines int
}

var errLineTooLong = errors.New("line too long")

// lineLimit is MaxLineBytes, lowered by tests so that a bomb test need not
// inflate 64 MiB.
var lineLimit = MaxLineBytes

func (d *lineReader) next() ([]byte, error) {
	d.buf = d.buf[:0]
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(d.buf)+len(chunk) > lineLimit {
			return nil, errLineTooLong
		}
		d.buf = append(d.buf, chunk...)
		if err == nil {
			d.lines++
			return d.buf[:len(d.buf)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(d.buf) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

func (d *lineReader) wrap(err error, what string) error {
	switch {
	case errors.Is(err, errLineTooLong):
		return fmt.Errorf("corrupt workload file: %s: line %d is longer than %d bytes", what, d.lines+1, lineLimit)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("truncated workload file: %s: it ends early", what)
	}
	return fmt.Errorf("corrupt workload file: %s: %v", what, err)
}
