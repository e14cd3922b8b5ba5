package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputSafety: what -o may destroy (the input, an existing file, a
// symlink's target, /dev/null), through the built binary with default flags.
// Before the fix, `replay w -o w` replaced the workload with a trace, an
// existing file or a symlink's target was overwritten silently, and
// `-o /dev/null` failed at the end on fsync.
func TestOutputSafety(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.workload.zst")
	build := func(args ...string) (string, int) {
		_, e, code := run(t, nil, bin, append([]string{"workload", "build", "--input-tokens", "64", "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1"}, args...)...)
		return e, code
	}
	if e, code := build("-o", wl); code != 0 {
		t.Fatalf("workload build: exit %d: %s", code, e)
	}
	orig, _ := os.ReadFile(wl)

	// workload build onto an existing file: refused, file untouched; --force replaces it.
	if e, code := build("-o", wl, "--seed", "2"); code != 2 || !strings.Contains(e, "--force") {
		t.Errorf("workload build over an existing file: exit %d, %q; want 2 naming --force", code, e)
	}
	if b, _ := os.ReadFile(wl); !bytes.Equal(b, orig) {
		t.Error("workload build overwrote an existing file without --force")
	}
	other := filepath.Join(dir, "other.workload.zst")
	if e, code := build("-o", other); code != 0 {
		t.Fatalf("workload build: exit %d: %s", code, e)
	}
	if e, code := build("-o", other, "--seed", "2", "--force"); code != 0 {
		t.Errorf("workload build --force: exit %d: %s", code, e)
	}

	replay := func(args ...string) (string, int) {
		_, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", url, "--model", "m"}, args...)...)
		return e, code
	}
	// The output is the input: refused even with --force.
	for _, force := range [][]string{nil, {"--force"}} {
		if e, code := replay(append([]string{"-o", wl}, force...)...); code != 2 || !strings.Contains(e, "input") {
			t.Errorf("replay %v -o the workload itself: exit %d, %q; want 2 saying it is an input", force, code, e)
		}
	}
	// A symlink to the input is the input too.
	link := filepath.Join(dir, "link.trace.zst")
	if err := os.Symlink(wl, link); err != nil {
		t.Fatal(err)
	}
	if e, code := replay("-o", link, "--force"); code != 2 || !strings.Contains(e, "input") {
		t.Errorf("replay -o a symlink to the workload: exit %d, %q", code, e)
	}
	if b, _ := os.ReadFile(wl); !bytes.Equal(b, orig) {
		t.Fatal("the workload was changed by a replay")
	}

	// An existing non-trace file: refused without --force.
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)
	if e, code := replay("-o", notes); code != 2 || !strings.Contains(e, "--force") {
		t.Errorf("replay -o an existing file: exit %d, %q", code, e)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Error("replay overwrote an existing file")
	}
	// A symlink to someone's file: with --force the link is replaced, its
	// target left alone.
	link2 := filepath.Join(dir, "link2.trace.zst")
	os.Symlink(notes, link2)
	if e, code := replay("-o", link2); code != 2 {
		t.Errorf("replay -o an existing symlink: exit %d, %q", code, e)
	}
	if e, code := replay("-o", link2, "--force"); code != 0 {
		t.Fatalf("replay -o symlink --force: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Error("replay --force wrote through a symlink into its target")
	}
	if st, err := os.Lstat(link2); err != nil || !st.Mode().IsRegular() {
		t.Errorf("the symlink was not replaced by a trace: %v %v", st, err)
	}
	// A new name works; writing it again needs --force.
	tr := filepath.Join(dir, "run.trace.zst")
	if e, code := replay("-o", tr); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	if e, code := replay("-o", tr); code != 2 {
		t.Errorf("replay over an existing trace: exit %d, %q; want 2", code, e)
	}
	if e, code := replay("-o", tr, "--force"); code != 0 {
		t.Errorf("replay over an existing trace with --force: exit %d: %s", code, e)
	}
	// -o /dev/null: works, and is not "an existing file".
	if _, err := os.Stat(os.DevNull); err == nil {
		if e, code := replay("-o", os.DevNull); code != 0 {
			t.Errorf("replay -o %s: exit %d: %s", os.DevNull, code, e)
		}
		if e, code := build("-o", os.DevNull); code != 0 {
			t.Errorf("workload build -o %s: exit %d: %s", os.DevNull, code, e)
		}
	}
}

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
