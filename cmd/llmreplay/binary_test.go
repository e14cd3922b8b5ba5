package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// binaryParallel is how many tests of this package run at once unless
// -parallel says otherwise. Most tests run the built binary and wait on
// it, on a simulator's real-time pace, or on a server of their own, far
// more than they compute, so go test's default (GOMAXPROCS, 2 on the
// project's machine) would leave the machine mostly idle.
const binaryParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(binaryParallel, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if binaryPath != "" && binaryErr == nil {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
	for _, d := range afterRun {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// afterRun are folders made once per test run and shared by tests (see
// makeCapTraces), removed when every test has ended.
var (
	afterRunMu sync.Mutex
	afterRun   []string
)

func removeAfterRun(dir string) {
	afterRunMu.Lock()
	defer afterRunMu.Unlock()
	afterRun = append(afterRun, dir)
}

// builtBinary builds llmreplay once per test run, so tests can run it as a
// user does: its own process, its flags, its exit status.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the llmreplay binary")
	}
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "llmreplay-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "llmreplay")
		if runtime.GOOS == "windows" {
			binaryPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = err
			binaryPath = string(out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("go build: %v\n%s", binaryErr, binaryPath)
	}
	return binaryPath
}

// parallelBinary is builtBinary for a test that runs beside the
// package's others, as nearly all do: it marks t parallel first.
func parallelBinary(t *testing.T) string {
	t.Helper()
	t.Parallel()
	return builtBinary(t)
}

// startSim runs `llmreplay sim` on a free loopback port and returns its
// base URL; the process ends with the test.
func startSim(t *testing.T, bin string, args ...string) string {
	t.Helper()
	u, _ := startSimProcess(t, bin, args...)
	return u
}

// simAddr is how `llmreplay sim` says where it listens.
var simAddr = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// startSimProcess is startSim that also gives the simulator's pid.
func startSimProcess(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"sim", "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() { // read to the end, so the simulator never blocks on a full pipe
			if u := simAddr.FindString(sc.Text()); u != "" && !found {
				found = true
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u, cmd.Process.Pid
	case <-time.After(60 * time.Second):
		t.Fatal("the simulator printed no address within 60 s")
	}
	return "", 0
}

// run runs the built binary with env added to the test's and returns
// its output and exit status.
func run(t *testing.T, env []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runWith(t, "", env, bin, args...)
}

// runIn is run in the folder dir.
func runIn(t *testing.T, dir, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runWith(t, dir, nil, bin, args...)
}

func runWith(t *testing.T, dir string, env []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// mustRun runs the built binary and fails the test unless it exits 0;
// it returns stdout and stderr.
func mustRun(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, code := run(t, nil, bin, args...)
	if code != 0 {
		t.Fatalf("llmreplay %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// buildWorkload builds a workload of args into dir (64-token prompts
// unless args set --input-tokens) and returns its path.
func buildWorkload(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	wl := filepath.Join(dir, "w.workload.zst")
	if _, err := os.Stat(wl); err == nil {
		t.Fatalf("%s exists: build each workload in a folder of its own", wl)
	}
	a := []string{"workload", "build", "-o", wl}
	if !slices.Contains(args, "--input-tokens") {
		a = append(a, "--input-tokens", "64")
	}
	a = append(a, args...)
	mustRun(t, bin, a...)
	return wl
}

// traceHeader is the header of the trace at path.
func traceHeader(t *testing.T, path string) trace.Header {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Header()
}

// pacedServer streams `tokens` one-token chunks `gap` apart per request and
// remembers when each response ended, on the server's side.
type pacedServer struct {
	tokens int
	gap    time.Duration
	key    string // when set, every request must carry "Bearer key"

	mu      sync.Mutex
	done    []time.Time
	auth    []string // Authorization of every request but pre-warming
	started atomic.Int64
}

func (s *pacedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if r.Method == http.MethodGet && r.URL.Path != "/v1/models" {
		return // connection pre-warming
	}
	s.mu.Lock()
	s.auth = append(s.auth, r.URL.Path+" "+r.Header.Get("Authorization"))
	s.mu.Unlock()
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"missing or wrong key"}}`)
		return
	}
	if r.URL.Path == "/v1/models" {
		io.WriteString(w, `{"object":"list","data":[{"id":"paced","object":"model"}]}`)
		return
	}
	s.started.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	for i := 1; i <= s.tokens; i++ {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d, \"},\"finish_reason\":null}]}\n\n", i)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.gap):
		}
	}
	io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	w.(http.Flusher).Flush()
	s.mu.Lock()
	s.done = append(s.done, time.Now())
	s.mu.Unlock()
}

func (s *pacedServer) doneBefore(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.done {
		if d.Before(t) {
			n++
		}
	}
	return n
}

// simWorkload starts a simulator with simArgs and builds a workload of
// wlArgs in a fresh folder; it returns the simulator's URL, the folder and
// the workload.
func simWorkload(t *testing.T, bin string, simArgs []string, wlArgs ...string) (simURL, dir, wl string) {
	t.Helper()
	simURL = startSim(t, bin, simArgs...)
	dir = t.TempDir()
	return simURL, dir, buildWorkload(t, bin, dir, wlArgs...)
}

// replaySim replays, with default flags, a workload built with wlArgs
// against a simulator started with simArgs, and returns the test's
// folder, the simulator's URL and the trace's path.
func replaySim(t *testing.T, bin string, simArgs []string, wlArgs ...string) (dir, simURL, tr string) {
	t.Helper()
	simURL, dir, wl := simWorkload(t, bin, simArgs, wlArgs...)
	tr = filepath.Join(dir, "run.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", simURL, "-o", tr)
	return dir, simURL, tr
}

// readTrace returns a trace's header and records.
func readTrace(t *testing.T, path string) (trace.Header, []trace.Record) {
	t.Helper()
	f := tracetest.Read(t, path)
	return f.Header, f.Records
}

// copyFile copies the file src to dst, for a test that must not change
// a shared file (a sample trace, another test's trace) or needs it twice.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// plainTrace is a trace file decompressed: what a person who opens the
// file with zstd -d reads, for tests that look for what must not be there.
func plainTrace(t *testing.T, path string) string {
	t.Helper()
	return string(testutil.ReadZstd(t, path))
}

// traceTexts is everything of a trace a person can read through the
// binary or zstd: the file decompressed, trace info and trace cat; a test
// adds the run's own stdout and stderr.
func traceTexts(t *testing.T, bin, tr string, more map[string]string) map[string]string {
	t.Helper()
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	cat, _, _ := run(t, nil, bin, "trace", "cat", tr)
	texts := map[string]string{"trace": plainTrace(t, tr), "trace info": info, "trace cat": cat}
	for k, v := range more {
		texts[k] = v
	}
	return texts
}

// noneHolds fails the test for every text that holds one of secrets.
func noneHolds(t *testing.T, texts map[string]string, secrets ...string) {
	t.Helper()
	for name, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%q appears in %s", s, name)
			}
		}
	}
}

// analyzeJSON runs `analyze --format json` on traces and decodes its
// output into doc.
func analyzeJSON(t *testing.T, bin string, doc any, traces ...string) string {
	t.Helper()
	out, e, code := run(t, nil, bin, append(append([]string{"analyze"}, traces...), "--format", "json")...)
	if code != 0 {
		t.Fatalf("analyze: exit %d %s", code, e)
	}
	if err := json.Unmarshal([]byte(out), doc); err != nil {
		t.Fatalf("analyze --format json: %v\n%.2000s", err, out)
	}
	return out
}

// analyzeDoc is the part of `analyze --format json` these tests read:
// each trace's usage checks and the warnings.
type analyzeDoc struct {
	Traces []struct {
		UsageChecks map[string]int `json:"usage_checks"`
	} `json:"traces"`
	Warnings []struct {
		Code     string         `json:"code"`
		Message  string         `json:"message"`
		Evidence map[string]any `json:"evidence"`
	} `json:"warnings"`
}

// analyzedGroup is one group of `analyze --format json`: its keys and
// each metric's value (nil where the metric has none).
type analyzedGroup struct {
	Keys    map[string]any `json:"keys"`
	Metrics map[string]struct {
		Value *float64 `json:"value"`
	} `json:"metrics"`
}

// exportedRequests runs `export --format csv` on a trace and returns
// requests.csv's rows keyed by column name.
func exportedRequests(t *testing.T, bin, tr string) []map[string]string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, bin, "export", tr, "--format", "csv", "-o", filepath.Join(dir, "csv"))
	b, err := os.ReadFile(filepath.Join(dir, "csv", "requests.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return csvByKey(t, string(b))
}
