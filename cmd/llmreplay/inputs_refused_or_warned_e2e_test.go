package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
// Job. kube job parses them as replay would, so a typo, a bad value or a
// flag given twice is refused on the user's machine (exit 2, no manifest),
// and a flag the Job sets itself (--url, --shards, --shard, --start-at,
// -o) is refused rather than silently overriding the Job's own value in
// every pod.
func TestKubeJobChecksReplayFlags(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := kubeWorkload(t, bin, dir)
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
		// replay refuses a single-value flag given twice: so must kube.
		{[]string{"--label", "a", "--label", "b"}, []string{"replay flags after --", "--label", "given twice"}},
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
	mustRun(t, bin, append(base, "--label", "--url", "--timeout", "5m", "-q")...)
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
	bin, dir := parallelBinary(t), t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := buildWorkload(t, bin, dir, "--input-tokens", "100", "--max-tokens", "8", "--schedule", "burst:1", "--repeats", "1")
	under := filepath.Join(file, "sub")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"bench", "--results", file}, []string{"--results " + file + ": it is a file, not a folder; give a folder's path"}},
		{[]string{"bench", "--results", under}, []string{"--results " + under + ": " + file + " is a file, not a folder, so nothing can go under it; give a folder's path"}},
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

// smallWorkload builds a two-request workload for runs against the
// simulator.
func smallWorkload(t *testing.T, bin string) string {
	t.Helper()
	return buildWorkload(t, bin, t.TempDir(), "--input-tokens", "100", "--max-tokens", "8", "--schedule", "burst:2", "--repeats", "1")
}

// TestServerMetricsDeadEndpointWarns: a --server-metrics URL that never
// answers leaves the trace without the server's side of the run. The run
// still succeeds (its requests were measured), and at its end one warning
// line says all the scrapes failed, the last error, and what is missing.
// Against the simulator's working /metrics (found by the default, auto)
// there is no such warning.
func TestServerMetricsDeadEndpointWarns(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin)
	wl := smallWorkload(t, bin)
	dir := t.TempDir()
	const dead = "http://127.0.0.1:1/metrics" // port 1: nothing listens
	_, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--server-metrics", dead, "-o", filepath.Join(dir, "dead.trace.zst"))
	if code != 0 {
		t.Fatalf("replay with a dead --server-metrics: exit %d, want 0: %s", code, e)
	}
	var warns []string
	for _, l := range strings.Split(e, "\n") {
		if strings.HasPrefix(l, "warning: server metrics") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 {
		t.Fatalf("want one server-metrics warning line, got %d:\n%s", len(warns), e)
	}
	// At least the scrape before the run and the one after it.
	if !regexp.MustCompile(`^warning: server metrics: all \d+ scrapes of ` + regexp.QuoteMeta(dead) + ` failed \(last: .+\): the trace has no server-side view`).MatchString(warns[0]) {
		t.Errorf("warning line: %s", warns[0])
	}
	if i, j := strings.Index(e, "trace: "), strings.Index(e, warns[0]); i < 0 || j < i {
		t.Errorf("the warning is not at the end of the run, after the summary:\n%s", e)
	}

	_, e, code = run(t, nil, bin, "replay", wl, "--url", url, "-o", filepath.Join(dir, "ok.trace.zst"))
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	if !strings.Contains(e, "server metrics: scraping "+url+"/metrics") {
		t.Fatalf("the simulator's /metrics was not scraped:\n%s", e)
	}
	// A scrape may time out on a loaded machine (a "gaps" warning, which
	// is true then); a working endpoint never leaves the trace without any.
	if strings.Contains(e, "no server-side view") {
		t.Errorf("a working /metrics warns:\n%s", e)
	}
}

// TestServerMetricsWarningEscaped: the warning carries the last scrape's
// error, which can hold the server's own bytes (a parse error quotes the
// bad token): a bidi override or an escape sequence from the server is
// shown escaped, never sent to the terminal as it is. bench (its own run
// loop) warns about a dead endpoint the same way.
func TestServerMetricsWarningEscaped(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, "bad\u202emetric{ 1\n\x1b[31mred\n")
	}))
	t.Cleanup(evil.Close)
	_, e, code := run(t, nil, bin, "replay", smallWorkload(t, bin), "--url", url, "--server-metrics", evil.URL+"/metrics",
		"-o", filepath.Join(t.TempDir(), "evil.trace.zst"))
	if code != 0 {
		t.Fatalf("replay: exit %d, want 0: %s", code, e)
	}
	oneWarning(t, e, `\u202emetric`)
	if strings.ContainsAny(e, "\u202e\x1b") {
		t.Errorf("the server's bytes reached stderr unescaped: %q", e)
	}

	_, e, code = run(t, nil, bin, "bench", "--concurrency", "1", "--repeats", "1", "--input-tokens", "100", "--max-tokens", "8",
		"--results", t.TempDir(), "--server-metrics", "http://127.0.0.1:1/metrics")
	if code != 0 {
		t.Fatalf("bench with a dead --server-metrics: exit %d, want 0: %s", code, e)
	}
	oneWarning(t, e, "no server-side view")
}

// oneWarning fails unless stderr has exactly one server-metrics warning
// line, holding want.
func oneWarning(t *testing.T, stderr, want string) {
	t.Helper()
	var warns []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "warning: server metrics") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], want) {
		t.Errorf("want one server-metrics warning line holding %q, got:\n%s", want, stderr)
	}
}

// TestStartAtPastWarns: a --start-at that has already passed (a shard
// started after the team's common start) starts the run at once; one
// warning line says how long ago the start time passed and that the run
// starts now, and the run succeeds. A start more than a day past is a
// wrong date, as one more than a day ahead is: exit 2, nothing written.
func TestStartAtPastWarns(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin)
	wl := smallWorkload(t, bin)
	dir := t.TempDir()
	at := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	_, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--start-at", at, "-o", filepath.Join(dir, "late.trace.zst"))
	if code != 0 {
		t.Fatalf("replay --start-at an hour ago: exit %d, want 0: %s", code, e)
	}
	re := regexp.MustCompile(`(?m)^warning: --start-at ` + regexp.QuoteMeta(at) + ` passed 1h\d+m\d+s ago: this run starts now\b.*$`)
	if n := len(re.FindAllString(e, -1)); n != 1 {
		t.Errorf("want one late-start warning line, got %d:\n%s", n, e)
	}

	old := time.Now().Add(-49 * time.Hour).UTC().Format(time.RFC3339)
	out := filepath.Join(dir, "old.trace.zst")
	_, e, code = run(t, nil, bin, "replay", wl, "--url", url, "--start-at", old, "-o", out)
	if code != 2 {
		t.Errorf("replay --start-at two days ago: exit %d, want 2: %s", code, e)
	}
	oneLine(t, "--start-at two days ago", e, "--start-at "+old+" passed 49h", "check the date and time zone", "leave --start-at out")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written from a refused --start-at", out)
	}
}

// TestStartInPassedWarns: a --start-in shorter than finding the model
// (here /v1/models answers after 2 s, through a proxy in front of the
// simulator) has passed when the run can start: the warning names the
// flag the user gave, not --start-at.
func TestStartInPassedWarns(t *testing.T) {
	bin := parallelBinary(t)
	target, err := neturl.Parse(startSim(t, bin))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // streamed chunks pass as they come
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			// A sleep bounds the delay from below: the start time
			// (1 ms after the command began) has surely passed by more
			// than the warning's 1 s margin, however busy the machine.
			time.Sleep(2 * time.Second)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	wl := smallWorkload(t, bin)
	_, e, code := run(t, nil, bin, "replay", wl, "--url", slow.URL, "--start-in", "1ms", "--server-metrics", "off", "--server-tokenize", "off",
		"-o", filepath.Join(t.TempDir(), "late.trace.zst"))
	if code != 0 {
		t.Fatalf("replay --start-in 1ms: exit %d, want 0: %s", code, e)
	}
	re := regexp.MustCompile(`(?m)^warning: the start time \S+ \(--start-in 1ms\) passed \S+ ago: this run starts now\b.*$`)
	if n := len(re.FindAllString(e, -1)); n != 1 {
		t.Errorf("want one late-start warning line naming --start-in, got %d:\n%s", n, e)
	}
}
