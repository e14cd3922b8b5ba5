package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputUnderAFile: an output path whose folder is a file is bad
// input for each command that takes -o: one line naming the file that is
// in the way, exit 2, the file untouched. Before, replay printed the bare
// "lstat …: not a directory" and workload build said the folder did not
// exist.
func TestOutputUnderAFile(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", wl, "--url", "http://127.0.0.1:1", "-o", filepath.Join(file, "t.trace.zst")},
		{"workload", "build", "--input-tokens", "100", "--max-tokens", "4", "--schedule", "burst:1", "-o", filepath.Join(file, "w.workload.zst")},
		{"selftest", "--short", "-o", filepath.Join(file, "s.json")},
	} {
		o, e, code := run(t, nil, bin, args...)
		want := file + " is a file, not a folder; choose another output path"
		if code != 2 || o != "" || len(strings.Split(strings.TrimSpace(e), "\n")) != 1 || !strings.Contains(e, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args[0], code, o, e, want)
		}
		if b, _ := os.ReadFile(file); string(b) != "mine" {
			t.Errorf("%s changed the file in the way: %q", args[0], b)
		}
	}
}
