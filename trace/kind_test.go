package trace

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/filekind"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// The magic line filekind recognises a trace by is the one traces start with.
func TestFileKindKnowsTheTraceMagic(t *testing.T) {
	if filekind.TraceMagic != magic {
		t.Fatalf("filekind.TraceMagic %q, the trace magic %q", filekind.TraceMagic, magic)
	}
}

// A file of another kind is named for what it is, with the command that
// takes it, and the error says so by type for callers that add hints.
func TestOtherKindsNamed(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"workload", compress(t, []byte("llmreplay-workload 1.3\n{}")), []string{"workload file, not a trace", "llmreplay replay FILE --url URL"}},
		{"parquet", []byte("PAR1\x15\x04\x15"), []string{"not an llmreplay trace", "Parquet table (what export writes)"}},
		{"report", []byte("<!DOCTYPE html>\n<html>"), []string{"HTML page (what report writes)"}},
		{"json", []byte(`{"version":"1.0","model":{}}`), []string{"JSON file"}},
	} {
		_, err := NewReader(strings.NewReader(string(c.data)))
		if _, ok := errors.AsType[*filekind.Mismatch](err); !ok {
			t.Errorf("%s: %v is not a filekind.Mismatch", c.name, err)
			continue
		}
		testutil.Contains(t, c.name, err.Error(), c.want...)
	}
}
