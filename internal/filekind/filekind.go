// Package filekind tells what a file given in the wrong place is, from its
// first bytes, so a reader that expected a trace and got a workload (or a
// Parquet table, a report, a tokenizer.json) says so and names the command
// that takes it, instead of "bad magic". It knows the first bytes of every
// file llmreplay writes; the trace and workload packages hold the same
// magic lines, checked equal by their tests.
package filekind

import (
	"bytes"
	"fmt"
)

// Kind is what a file holds.
type Kind string

const (
	Other    Kind = ""         // nothing llmreplay knows
	Empty    Kind = "empty"    // no byte at all
	Trace    Kind = "trace"    // what replay records
	Workload Kind = "workload" // what replay sends
	Parquet  Kind = "parquet"  // what export writes by default
	HTML     Kind = "html"     // what report writes
	JSON     Kind = "json"     // a tokenizer.json, analyze --format json, …
	Zstd     Kind = "zstd"     // zstd-compressed, of no kind above
)

// The magic lines the decompressed trace and workload files start with.
const (
	TraceMagic    = "llmreplay-trace"
	WorkloadMagic = "llmreplay-workload"
)

// zstd frames start with this magic; skippable frames with 0x184D2A5?.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// IsZstd reports whether head (at least 4 bytes) starts a zstd stream.
func IsZstd(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	return bytes.Equal(head[:4], zstdMagic) || (head[0]&0xf0 == 0x50 && head[1] == 0x2a && head[2] == 0x4d && head[3] == 0x18)
}

// OfRaw is the kind of a file from its first bytes as stored (a few
// hundred are plenty): Zstd for any zstd stream (see OfContent for what it
// holds), else what the bytes say, Other when they say nothing known.
func OfRaw(head []byte) Kind {
	if len(head) == 0 {
		return Empty
	}
	if IsZstd(head) {
		return Zstd
	}
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return Parquet
	}
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	lower := bytes.ToLower(t[:min(len(t), 16)])
	switch {
	case bytes.HasPrefix(lower, []byte("<!doctype html")), bytes.HasPrefix(lower, []byte("<html")):
		return HTML
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return JSON
	}
	return Other
}

// OfContent is the kind of a zstd-compressed file from the start of its
// decompressed content: Trace, Workload, JSON (a tokenizer.json.zst), or
// Zstd for anything else.
func OfContent(inner []byte) Kind {
	switch {
	case bytes.HasPrefix(inner, []byte(WorkloadMagic)):
		return Workload
	case bytes.HasPrefix(inner, []byte(TraceMagic)):
		return Trace
	case len(inner) > 0 && bytes.HasPrefix([]byte(WorkloadMagic), inner):
		// a prefix as long as the reader had read: a cut workload file
		return Workload
	case OfRaw(inner) == JSON:
		return JSON
	}
	return Zstd
}

// Mismatch is a file of kind Got given where a Want was expected.
type Mismatch struct {
	Path string // the file as given ("" when unknown, e.g. standard input)
	Got  Kind
	Want Kind // Trace or Workload
}

// what names a kind for people, with what makes one.
var what = map[Kind]string{
	Empty:    "it is empty",
	Trace:    "this is a trace file (what replay records)",
	Workload: "this is a workload file (what replay sends)",
	Parquet:  "this is a Parquet table (what export writes)",
	HTML:     "this is an HTML page (what report writes)",
	JSON:     "this is a JSON file (a tokenizer.json, or analyze --format json?)",
	Zstd:     "it is zstd-compressed but holds no llmreplay magic line",
}

// wanted holds, for each of the pipeline's two files, what to say of each
// kind of file given in its place.
var wanted = map[Kind]struct {
	other      Kind   // the pipeline's other file
	asOther    string // %s: the file, in the command that takes it
	notZstd    string
	empty      string
	self       string
	elseFormat string // %s: what the file is
}{
	Trace: {
		other:      Workload,
		asOther:    "this is a workload file, not a trace (a workload is what replay sends): replay it first, 'llmreplay replay %s --url URL', and give the .trace.zst it writes",
		notZstd:    "not an llmreplay trace: it is not zstd-compressed (traces are the NAME.trace.zst files replay writes)",
		empty:      "the file is empty: not a trace (was the run killed before it started?)",
		self:       "this is a trace",
		elseFormat: "not an llmreplay trace: %s; traces are the NAME.trace.zst files replay writes",
	},
	Workload: {
		other:      Trace,
		asOther:    "this is a trace file, not a workload (a trace is what replay records): analyze it with 'llmreplay analyze %s'; a workload is made by 'llmreplay workload build -o NAME.workload.zst'",
		notZstd:    "not a workload file: it is not zstd-compressed (workload files are NAME.workload.zst, made by 'llmreplay workload build')",
		empty:      "not a workload file: it is empty",
		self:       "this is a workload",
		elseFormat: "not a workload file: %s; workload files are NAME.workload.zst, made by 'llmreplay workload build'",
	},
}

func (m *Mismatch) Error() string {
	w, ok := wanted[m.Want]
	if !ok {
		return fmt.Sprintf("not a %s: %s", m.Want, what[m.Got])
	}
	switch m.Got {
	case w.other:
		file := m.Path
		if file == "" || file == "-" {
			file = "FILE"
		}
		return fmt.Sprintf(w.asOther, file)
	case Other:
		return w.notZstd
	case Empty:
		return w.empty
	case m.Want:
		return w.self
	}
	return fmt.Sprintf(w.elseFormat, what[m.Got])
}
