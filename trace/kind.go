package trace

import (
	"bufio"
	"fmt"

	"github.com/llmreplay/llmreplay/internal/filekind"
)

// mismatch is the error of a file of another kind than a trace: it says
// what the file is and the command that takes it (a workload: replay).
func (r *Reader) mismatch(got filekind.Kind) error {
	m := &filekind.Mismatch{Path: r.name, Got: got, Want: filekind.Trace}
	if r.name == "" {
		return fmt.Errorf("trace: %w", m)
	}
	return fmt.Errorf("trace: %s: %w", r.name, m)
}

// notATrace is the error of a file that is not zstd-compressed: what its
// first bytes say it is (a Parquet table, a report, JSON), or that it is
// not a trace.
func (r *Reader) notATrace(raw *bufio.Reader) error {
	head, _ := raw.Peek(512)
	return r.mismatch(filekind.OfRaw(head))
}

// otherKind is the error of a zstd stream whose content starts with m, not
// the trace magic, when m says what else it is (a workload, JSON); nil
// when it says nothing known.
func (r *Reader) otherKind(m []byte) error {
	if k := filekind.OfContent(m); k != filekind.Zstd {
		return r.mismatch(k)
	}
	return nil
}
