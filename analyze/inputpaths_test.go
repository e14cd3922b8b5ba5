package analyze

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestInputPathsReadLabelsOff: label=path names path, a bare path and "-"
// name themselves, and a file whose own name holds "=" is that file.
func TestInputPathsReadLabelsOff(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a=b.trace.zst")
	testutil.WriteFile(t, odd, nil)
	args := []string{"vllm=runs/v.trace.zst", "runs/plain.trace.zst", "-", odd, "=x", "label="}
	want := []string{"runs/v.trace.zst", "runs/plain.trace.zst", "-", odd, "=x", "label="}
	if got := InputPaths(args); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
