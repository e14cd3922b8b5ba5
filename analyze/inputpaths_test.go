package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInputPathsReadLabelsOff: label=path names path, a bare path and "-"
// name themselves, and a file whose own name holds "=" is that file.
func TestInputPathsReadLabelsOff(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a=b.trace.zst")
	if err := os.WriteFile(odd, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"vllm=runs/v.trace.zst", "runs/plain.trace.zst", "-", odd, "=x", "label="}
	want := []string{"runs/v.trace.zst", "runs/plain.trace.zst", "-", odd, "=x", "label="}
	if got := InputPaths(args); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
