package inspect

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/trace"
)

// TestCatOptionsPrintOneThing: records without chunks, request rows and
// scrapes are different outputs, and a stated definition set needs the
// request rows it computes.
func TestCatOptionsPrintOneThing(t *testing.T) {
	defs := func(f string) bool { return f == "Definitions" }
	for _, c := range []struct {
		o     CatOptions
		given fielderr.Given
		field string
	}{
		{CatOptions{Requests: true, NoChunks: true}, nil, "Requests"},
		{CatOptions{Scrapes: true, NoChunks: true}, nil, "Scrapes"},
		{CatOptions{}, defs, "Definitions"},
	} {
		if fe := fielderr.As(c.o.Check(c.given)); fe == nil || fe.Field != c.field {
			t.Errorf("%+v: got %v, want a %s error", c.o, fe, c.field)
		}
	}
	if err := (CatOptions{Requests: true}).Check(defs); err != nil {
		t.Errorf("--requests with --definitions: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed pipe") }

// TestCatSaysWhoFailed: a trace that cannot be read is the input's error,
// a writer that fails is a *WriteError, and each record is one line.
func TestCatSaysWhoFailed(t *testing.T) {
	const golden = "../../traces/v1/golden-1.5.trace.zst"
	var out strings.Builder
	if err := Cat(&out, io.Discard, nil, []string{golden}, CatOptions{NoChunks: true}); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Scan() {
		n++
	}
	r.Close()
	if lines := strings.Count(out.String(), "\n"); lines != n || !strings.Contains(out.String(), `"chunk_count"`) {
		t.Errorf("%d lines for %d records:\n%.300s", lines, n, out.String())
	}
	var we *WriteError
	if err := Cat(failingWriter{}, io.Discard, nil, []string{golden}, CatOptions{}); !errors.As(err, &we) {
		t.Errorf("a failing writer: %v, want a *WriteError", err)
	}
	if err := Cat(io.Discard, io.Discard, nil, []string{"no/such.trace.zst"}, CatOptions{}); err == nil || errors.As(err, &we) {
		t.Errorf("a missing trace: %v, want the input's error", err)
	}
}
