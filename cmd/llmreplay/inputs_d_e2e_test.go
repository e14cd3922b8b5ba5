package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oneLine fails the test unless stderr is exactly one line holding every
// want: bad input is said once, in words naming the problem and the fix.
func oneLine(t *testing.T, what, stderr string, want ...string) {
	t.Helper()
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("%s: stderr is not one line:\n%s", what, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr lacks %q:\n%s", what, w, stderr)
		}
	}
}

// TestKubeJobChecksReplayFlags: the flags after -- go into every pod of the
// Job. kube job parses them as replay would, so a typo or a bad value is
// refused on the user's machine (exit 2, no manifest), and a flag the Job
// sets itself (--url, --shards, --shard, --start-at, -o) is refused rather
// than silently overriding the Job's own value in every pod.
func TestKubeJobChecksReplayFlags(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.workload.zst")
	if _, e, code := run(t, nil, bin, "workload", "build", "--input-tokens", "100", "--max-tokens", "8", "--schedule", "burst:4", "--repeats", "1", "-o", wl); code != 0 {
		t.Fatal(e)
	}
	job := filepath.Join(dir, "job.yaml")
	base := []string{"kube", "job", wl, "--shards", "2", "--image", "i", "--url", "http://vllm:8000", "--results-claim", "r",
		"--start-at", "2030-01-02T03:04:05Z", "-o", job, "--"}
	for _, c := range []struct {
		after []string
		want  []string
	}{
		{[]string{"--url", "http://other:8000"}, []string{"--url after --", "the Job sets --url itself", "before --"}},
		{[]string{"--url=http://other:8000"}, []string{"--url after --", "the Job sets --url itself"}},
		{[]string{"--shards", "3"}, []string{"--shards after --", "the Job sets --shards itself"}},
		{[]string{"--shard", "0/2"}, []string{"--shard after --", "the Job sets --shard itself", "drop it"}},
		{[]string{"--start-at", "2030-01-01T00:00:00Z"}, []string{"--start-at after --", "the Job sets --start-at itself"}},
		{[]string{"-oother.trace.zst"}, []string{"-o/--output after --", "drop it"}},
		{[]string{"--label", "x", "--bogus"}, []string{"replay flags after --", "unknown flag: --bogus", "llmreplay replay --help"}},
		{[]string{"--timeout", "soon"}, []string{"replay flags after --", `"soon"`, "--timeout"}},
		{[]string{"--label", "x", "second.workload.zst"}, []string{`"second.workload.zst"`, "not a flag"}},
	} {
		_, e, code := run(t, nil, bin, append(base, c.after...)...)
		if code != 2 {
			t.Errorf("-- %v: exit %d, want 2: %s", c.after, code, e)
		}
		oneLine(t, strings.Join(c.after, " "), e, c.want...)
		if _, err := os.Stat(job); err == nil {
			t.Fatalf("-- %v: %s was written from bad input", c.after, job)
		}
	}
	// Good flags pass as they are; a value that looks like a flag is a
	// value (replay's parser says so), and the Job keeps its own --url.
	if _, e, code := run(t, nil, bin, append(base, "--label", "--url", "--timeout", "5m", "-q")...); code != 0 {
		t.Fatalf("good replay flags: exit %d: %s", code, e)
	}
	y, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- --url\n        - http://vllm:8000\n", "- --label\n        - --url\n", "- --timeout\n        - 5m\n", "- -q\n"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("job.yaml lacks %q:\n%s", want, y)
		}
	}
	if n := strings.Count(string(y), "- --url\n        - http"); n != 1 {
		t.Errorf("job.yaml gives --url an address %d times, want once:\n%s", n, y)
	}
}

// TestFolderFlagIsAFile: every flag naming a folder to write into (bench's
// and capacity's --results, selftest's --dir, export's -o, and replay's
// default results folder), given a path that is a regular file or lies
// under one, is bad input: exit 2, one line naming the flag, the file and
// the fix, before anything runs; the file is left as it was.
func TestFolderFlagIsAFile(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := filepath.Join(dir, "w.workload.zst")
	if _, e, code := run(t, nil, bin, "workload", "build", "--input-tokens", "100", "--max-tokens", "8", "--schedule", "burst:1", "--repeats", "1", "-o", wl); code != 0 {
		t.Fatal(e)
	}
	under := filepath.Join(file, "sub")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"bench", "--results", file}, []string{"--results " + file + ": it is a file, not a folder", "give a folder's path"}},
		{[]string{"bench", "--results", under}, []string{"--results " + under + ": " + file + " is a file, not a folder", "give a folder's path"}},
		{[]string{"capacity", "--slo", "ttft_p90<=1s", "--results", file}, []string{"--results " + file + ": it is a file, not a folder"}},
		{[]string{"capacity", "--slo", "ttft_p90<=1s", "--results", under}, []string{"--results " + under + ": " + file + " is a file, not a folder"}},
		{[]string{"selftest", "--short", "--dir", file}, []string{"--dir " + file + ": it is a file, not a folder"}},
		{[]string{"selftest", "--short", "--dir", under}, []string{"--dir " + under + ": " + file + " is a file, not a folder"}},
		{[]string{"export", "-o", file, wl}, []string{"-o " + file + ": it is a file, not a folder"}},
		{[]string{"export", "-o", under, wl}, []string{"-o " + under + ": " + file + " is a file, not a folder"}},
	} {
		_, e, code := run(t, nil, bin, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", c.args, code, e)
		}
		oneLine(t, strings.Join(c.args, " "), e, c.want...)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "mine\n" {
		t.Errorf("the file in the way was changed: %q, %v", b, err)
	}

	// replay without -o writes under ./results: a file of that name is in
	// the way. No server is needed: the check comes before any request.
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "results"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "replay", wl, "--url", "http://127.0.0.1:1")
	cmd.Dir = wd
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("replay with ./results a file: %v, want exit 2: %s", err, e.String())
	}
	oneLine(t, "replay", e.String(), "results is a file, not a folder", "-o NAME.trace.zst")
}
