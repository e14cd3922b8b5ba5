package workload

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/filekind"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// The magic line filekind recognises a workload by is the one workloads
// start with.
func TestFileKindKnowsTheWorkloadMagic(t *testing.T) {
	if filekind.WorkloadMagic != FormatName {
		t.Fatalf("filekind.WorkloadMagic %q, the workload magic %q", filekind.WorkloadMagic, FormatName)
	}
}

// A trace given for a workload says it is a trace and names analyze with
// the file's path; other files llmreplay writes are named too.
func TestOtherKindsNamed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"run.trace.zst", compress(t, "llmreplay-trace\x01\x06\x10{}"), []string{"run.trace.zst: this is a trace file, not a workload", "llmreplay analyze " + filepath.Join(dir, "run.trace.zst"), "llmreplay workload build"}},
		{"tokenizer.json.zst", compress(t, `{"version":"1.0"}`), []string{"not a workload file: this is a JSON file"}},
		{"requests.parquet", []byte("PAR1\x15\x04"), []string{"Parquet table (what export writes)"}},
		{"report.html", []byte("<!DOCTYPE html><html>"), []string{"HTML page (what report writes)"}},
	} {
		path := filepath.Join(dir, c.name)
		testutil.WriteFile(t, path, c.data)
		_, err := Open(path)
		if _, ok := errors.AsType[*filekind.Mismatch](err); !ok {
			t.Errorf("%s: %v is not a filekind.Mismatch", c.name, err)
			continue
		}
		testutil.Contains(t, c.name, err.Error(), c.want...)
	}
	// Decode, without a path, still says what the file is.
	_, err := Decode(bytes.NewReader(compress(t, "llmreplay-trace\x01\x06")))
	if err == nil || !strings.Contains(err.Error(), "'llmreplay analyze FILE'") {
		t.Errorf("Decode of a trace: %v", err)
	}
}
