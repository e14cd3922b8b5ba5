//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/trace"
)

// These tests prove the promises of README.md and docs/RELIABILITY.md as a
// user meets them: the built binary, its default flags (except where the
// promise is about a flag), a server it talks to over loopback. Each test
// quotes the sentence it proves.

func countRecords(t *testing.T, path string) (n int, truncated bool) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatalf("the trace does not open: %v", err)
	}
	defer r.Close()
	for r.Scan() {
		n++
	}
	if r.Err() != nil {
		t.Fatalf("reading the trace: %v", r.Err())
	}
	return n, r.Truncated()
}

// README: "Crash-safe traces. The trace on disk is readable up to the last
// second of a run killed with SIGKILL". With default flags: every request
// that finished more than 1.5 s before the kill is in the trace, and
// analyze reads it.
func TestPromiseSIGKILLLosesAtMostTheLastSecond(t *testing.T) {
	bin := parallelBinary(t)
	srv := &pacedServer{tokens: 20, gap: 10 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "20", "--schedule", "closed:4", "--requests", "400")
	tr := filepath.Join(dir, "killed.trace.zst")
	cmd := exec.Command(bin, "replay", wl, "--url", ts.URL, "--model", "paced", "-o", tr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for work to be done rather than for a time: 40 responses (10 per
	// worker) is several flush intervals on any machine.
	for deadline := time.Now().Add(2 * time.Minute); srv.doneBefore(time.Now()) < 40; {
		if time.Now().After(deadline) {
			t.Fatal("the server finished fewer than 40 responses in 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	kill := time.Now()
	cmd.Process.Kill()
	cmd.Wait()
	want := srv.doneBefore(kill.Add(-1500 * time.Millisecond))
	n, _ := countRecords(t, tr)
	if n < want || want < 40 {
		t.Fatalf("the trace holds %d records; the server had finished %d responses 1.5 s before the kill", n, want)
	}
	out, e, code := run(t, nil, bin, "analyze", tr)
	if code != 0 || !strings.Contains(out, "concurrency") {
		t.Fatalf("analyze of the killed run's trace: exit %d\n%s\n%s", code, out, e)
	}
}

// docs/RELIABILITY.md: a full disk stops the run, with one line naming the
// file, and "records flushed before this error stay readable". The child
// runs under a 64 KiB file-size limit (Go ignores SIGXFSZ, so the write
// fails with EFBIG as on a full disk).
func TestPromiseFullDiskStopsTheRun(t *testing.T) {
	bin := parallelBinary(t)
	srv := &pacedServer{tokens: 40, gap: time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "40", "--schedule", "closed:8", "--requests", "4000")
	tr := filepath.Join(dir, "full.trace.zst")
	cmd := exec.Command("bash", "-c", `ulimit -f 64; exec "$0" "$@"`, bin, "replay", wl, "--url", ts.URL, "--model", "paced", "-o", tr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() == 0 {
		t.Fatalf("replay on a full disk: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run stopped: trace: writing "+tr+": file too large (records flushed before this error stay readable)") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// Stopped, not run to the end: the trace stopped growing at 64 KiB,
	// thousands of requests short of the workload.
	started := srv.started.Load()
	if started >= 4000 {
		t.Errorf("the server saw all %d requests: the run did not stop", started)
	}
	if st, err := os.Stat(tr); err != nil || st.Size() > 64<<10 {
		t.Fatalf("the trace: %v, %v: want at most the 64 KiB limit", st, err)
	}
	// "Within 2 s", measured by counters rather than a wall clock on a
	// loaded machine: the readable records give this run's own request
	// rate (n over the run time of the last one), and the requests the
	// server saw beyond them, at that rate, say how long the run went on
	// after its last flush. That may be 1 s (the flush interval) plus 2 s
	// (the promise); the bound doubles it for the load. The first version
	// noticed the full disk only at Close and sent all 4,000.
	n, lastDone := 0, int64(0)
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatalf("the trace left by a full disk does not open: %v", err)
	}
	for r.Scan() {
		n++
		lastDone = max(lastDone, r.Record().Done)
	}
	if r.Err() != nil {
		t.Fatalf("the trace left by a full disk does not decode: %v after %d records", r.Err(), n)
	}
	r.Close()
	if n == 0 || lastDone <= 0 {
		t.Fatal("no record readable after the disk filled")
	}
	rate := float64(n) / (float64(lastDone) / 1e9)
	after := float64(started-int64(n)) / rate
	t.Logf("%d records readable, %d requests started, %.0f requests/s: the run went on %.2f s past its last flush", n, started, rate, after)
	if after > 6 {
		t.Errorf("the run went on about %.1f s after its last flush (%d requests past the %d readable at %.0f/s): want it stopped within 2 s of the failed write", after, started-int64(n), n, rate)
	}
}

// README/RELIABILITY: the API key "is sent as a bearer token and written
// nowhere"; a key in the URL's password is used the same way, model
// discovery included (the first version sent /v1/models without it).
func TestPromiseKeyFromURLOrEnvEverywhereButFiles(t *testing.T) {
	bin := parallelBinary(t)
	const key = "sk-e2e-URLKEY-5c1d9e7a3b20f4"
	for _, how := range []string{"url", "env"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel() // independent: a server and a folder of its own
			srv := &pacedServer{tokens: 3, gap: time.Millisecond, key: key}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			dir := t.TempDir()
			wl := buildWorkload(t, bin, dir, "--max-tokens", "3", "--schedule", "burst:2", "--repeats", "2")
			tr := filepath.Join(dir, "k.trace.zst")
			u, env := ts.URL, []string{"OPENAI_API_KEY="}
			if how == "url" {
				u = strings.Replace(ts.URL, "http://", "http://user:"+key+"@", 1)
			} else {
				env = []string{"OPENAI_API_KEY=" + key}
			}
			// No --model: the model is discovered, with the key.
			out, e, code := run(t, env, bin, "replay", wl, "--url", u, "-o", tr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, e)
			}
			srv.mu.Lock()
			seen := append([]string(nil), srv.auth...)
			srv.mu.Unlock()
			// Discovery, the probe of the server's tokenizer (its three
			// shapes, none answered), then the four requests.
			if len(seen) != 8 || !strings.HasPrefix(seen[0], "/v1/models Bearer "+key) || !strings.HasPrefix(seen[1], "/tokenize Bearer "+key) {
				t.Errorf("requests the server saw: %q", seen)
			}
			for _, a := range seen {
				if !strings.HasSuffix(a, "Bearer "+key) {
					t.Errorf("a request went out without the key: %q", a)
				}
			}
			noneHolds(t, traceTexts(t, bin, tr, map[string]string{"stdout": out, "stderr": e}), key[:16], key[len(key)-16:])
		})
	}
}

// README: "Ctrl-C closes it cleanly": exit status 130, a trace that reads
// to its end (no cut-short tail), in-flight requests recorded as cancelled.
func TestPromiseCtrlC(t *testing.T) {
	bin := parallelBinary(t)
	srv := &pacedServer{tokens: 100000, gap: 20 * time.Millisecond} // never ends by itself
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "100000", "--schedule", "burst:3", "--repeats", "2")
	tr := filepath.Join(dir, "int.trace.zst")
	cmd := exec.Command(bin, "replay", wl, "--url", ts.URL, "--model", "paced", "-o", tr, "--grace", "200ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); srv.started.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the requests never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit after Ctrl-C: %v\n%s", err, stderr.String())
	}
	// The progress display (plain lines: stderr is not a terminal) says
	// what the grace period leaves the requests in flight.
	if !regexp.MustCompile(`(?m)^stopping: in-flight requests may finish for \S+ more \(grace 200ms\), then are cut$`).MatchString(stderr.String()) {
		t.Errorf("stderr does not show the grace period:\n%s", stderr.String())
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cancelled := 0
	for r.Scan() {
		if e := r.Record().Error; e != nil && e.Class == trace.ErrCancelled {
			cancelled++
		}
	}
	if r.Err() != nil || r.Truncated() || cancelled != 3 {
		t.Errorf("err %v, truncated %v, %d cancelled records (want the 3 in flight)", r.Err(), r.Truncated(), cancelled)
	}
}

// README: "go run ./cmd/llmreplay bench" is the main job on a fresh
// machine: with no flags it runs the concurrency sweep on the built-in
// simulator, says so, prints the summary (one block per concurrency 1, 4, 8
// and 16 with tok/s and the latency percentiles, within 100 columns, the
// very summary analyze prints of its trace) and the run's counts, and
// leaves the workload, trace, table and JSON under results/. The shape is
// checked, not the numbers.
func TestPromiseREADMEBench(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	cmd := exec.Command(bin, "bench")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	out, errOut := stdout.String(), stderr.String()
	t.Logf("bench printed:\n%s", out)
	if !strings.Contains(errOut, "no --url: using llmreplay's SIMULATED server, profile vllm-rtx5090-bf16") {
		t.Errorf("stderr does not say the server is simulated:\n%s", errOut)
	}
	first, summary, _ := strings.Cut(out, "\n")
	if first != "server: SIMULATED (profile vllm-rtx5090-bf16)" || !strings.HasPrefix(summary, "summary (definitions: llmreplay)\n") {
		t.Fatalf("bench does not start with the server and the summary:\n%s", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, l)
		}
	}
	heads := regexp.MustCompile(`(?m)^sim vllm-rtx5090-bf16 · concurrency (\d+) · (\d+) requests ok · 6 runs\n  tok/s  per stream \S+ \[\S+, \S+\]   aggregate \S+ \[\S+, \S+\]\n  ms +p50 +p90 +p95 +p99\n  TTFT( +\S+){4}\n  TPOT( +\S+){4}\n  ITL( +\S+){4}\n  E2E( +\S+){4}\n`).FindAllStringSubmatch(out, -1)
	var levels []string
	for _, h := range heads {
		levels = append(levels, h[1]+":"+h[2])
	}
	if strings.Join(levels, " ") != "1:6 4:24 8:48 16:96" {
		t.Errorf("summary blocks for concurrency:requests %v, want 1:6 4:24 8:48 16:96:\n%s", levels, out)
	}
	for _, w := range []string{"174 requests sent, 174 ok, 0 failed", "trace: results/", "table: results/", "json:  results/", "report: results/"} {
		if !strings.Contains(out+errOut, w) {
			t.Errorf("output lacks %q:\n%s\n%s", w, out, errOut)
		}
	}
	for _, ext := range []string{".workload.zst", ".trace.zst", ".md", ".json", ".report.html"} {
		m, _ := filepath.Glob(filepath.Join(dir, "results", "*"+ext))
		if len(m) != 1 {
			t.Errorf("results/ has %d *%s files, want 1", len(m), ext)
		}
	}
	// Its default repeats give check verdicts on per-run claims: one
	// aggregate_tps sample per run, 6 runs per level.
	traces, _ := filepath.Glob(filepath.Join(dir, "results", "*.trace.zst"))
	if len(traces) == 1 {
		// What bench printed is what analyze prints of its trace.
		if again, e, code := run(t, nil, bin, "analyze", traces[0]); code != 0 || again != summary {
			t.Errorf("analyze of bench's trace (exit %d) prints another summary than bench did:\n%s\n%s", code, again, e)
		}
		claims := []string{"check", traces[0]}
		for _, c := range []string{"1", "4", "8", "16"} {
			claims = append(claims, "--claim", "aggregate_tps{concurrency="+c+"} > 0", "--claim", "per_stream_tps{concurrency="+c+"} > 0")
		}
		out, e, code := run(t, nil, bin, claims...)
		if code != 0 || checkVerdicts(t, "check on bench's trace", out) != 8 || strings.Count(out, "aggregate_tps") != 4 || strings.Count(out, " n=6 ") < 5 {
			t.Errorf("check on bench's trace: exit %d, want 8 HOLDS (aggregate over 6 runs):\n%s%s", code, out, e)
		}
	}
}

// TestBenchBadInputBeforeStart: every bench setting is checked before the
// simulator starts or anything prints that a run began; each bad flag is
// named alone, exit 2, and no results folder appears.
func TestBenchBadInputBeforeStart(t *testing.T) {
	bin := parallelBinary(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-tokens", "-5"}, "--input-tokens -5 is not an input length"},
		{[]string{"--max-tokens", "0"}, "--max-tokens 0: give at least 1"},
		// Negative values are refused by the workload build, named by flag.
		{[]string{"--max-tokens", "-3"}, "--max-tokens -3 is out of range"},
		{[]string{"--repeats", "-2"}, "--repeats -2 is out of range"},
		{[]string{"--profile", "nope"}, "--profile \"nope\" is not a simulator profile"},
		{[]string{"--concurrency", "0"}, "--concurrency 0 is out of range"},
		{[]string{"--api", "grpc"}, "--api \"grpc\" is not known"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(bin, append([]string{"bench"}, c.args...)...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if !ok || ee.ExitCode() != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("bench %v: %v, stderr %q; want exit 2 and one line with %q", c.args, err, stderr.String(), c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
			t.Errorf("bench %v left a results folder", c.args)
		}
	}
}

// Cache studies must reach the cache: replaying identical raw prompts twice
// to llama.cpp's API with --salt off leaves cache_prompt to the server (on),
// so the second run's prompts are served from its cache (cache_n > 0); a
// salted run sends cache_prompt: false and every prompt is computed. The
// trace header records what was sent. The simulator honours cache_prompt
// as llama-server does.
func TestPromiseCacheStudiesReachTheCache(t *testing.T) {
	bin := parallelBinary(t)
	url, dir, wl := simWorkload(t, bin, []string{"--profile", "llamacpp-rtx5090-q4km"}, "--shape", "completion", "--max-tokens", "4", "--schedule", "burst:2", "--repeats", "1")
	cached := func(name string, args ...string) (float64, string) {
		tr := filepath.Join(dir, name)
		a := append([]string{"replay", wl, "--url", url, "--api", "llamacpp", "--model", "m", "-o", tr}, args...)
		if _, e, code := run(t, nil, bin, a...); code != 0 {
			t.Fatalf("replay %v: %d %s", args, code, e)
		}
		out, _ := mustRun(t, bin, "analyze", "--format", "csv", "--by", "label", "--metrics", "server_cached_tokens", tr)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		cells := strings.Split(lines[len(lines)-1], ",")
		v := 0.0
		fmt.Sscan(cells[1], &v)
		info, _, _ := run(t, nil, bin, "trace", "info", tr)
		return v, info
	}
	if v, info := cached("salted.trace.zst"); v != 0 || !strings.Contains(info, "server_cache=off") {
		t.Errorf("salted run: %v cached tokens (want 0), header:\n%s", v, info)
	}
	cached("first.trace.zst", "--salt", "off")
	if v, info := cached("again.trace.zst", "--salt", "off"); v <= 0 || !strings.Contains(info, "server_cache=default") {
		t.Errorf("repeated unsalted run: %v cached tokens (want > 0), header:\n%s", v, info)
	}
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--server-cache", "maybe"); code != 2 || !strings.Contains(e, `--server-cache "maybe" is not a cache setting`) {
		t.Errorf("--server-cache maybe: %d %s", code, e)
	}
}

// README: "Trust warnings when a server's numbers cannot be taken at face
// value": a server that reports ten times the tokens it sent (usage_mismatch)
// and one that sends the whole answer at the end (not_streamed), each
// replayed with default flags, are named by analyze; replay itself says at
// its end that the responses were not streamed.
func TestPromiseTrustWarnings(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "16", "--schedule", "burst:2", "--repeats", "1")
	for _, c := range []struct {
		fault, warning string
	}{{"--inflate-usage", "usage_mismatch"}, {"--no-stream", "not_streamed"}} {
		url := startSim(t, bin, "--profile", "fast", c.fault)
		tr := filepath.Join(dir, c.warning+".trace.zst")
		_, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", tr)
		if code != 0 {
			t.Fatalf("replay against %s: %d %s", c.fault, code, e)
		}
		if said := strings.Contains(e, "warning: 2 of 2 responses came in one piece, not streamed"); said != (c.warning == "not_streamed") {
			t.Errorf("replay against %s: said not streamed %v:\n%s", c.fault, said, e)
		}
		out, e, _ := run(t, nil, bin, "analyze", tr)
		if !strings.Contains(out+e, c.warning) {
			t.Errorf("analyze of a %s server does not warn %s:\n%s\n%s", c.fault, c.warning, out, e)
		}
	}
}

// README: "Scheduled and actual times. Open-loop requests are sent at
// absolute deadlines …, both times are recorded, and TTFT is also reported
// from the scheduled time". A constant-rate workload of 10 requests at
// 20/s: every record has its scheduled time at 50 ms steps and a send time
// not before it, and analyze reports ttft_sched ≥ ttft.
func TestPromiseScheduledAndActualTimes(t *testing.T) {
	bin := parallelBinary(t)
	_, _, tr := replaySim(t, bin, []string{"--profile", "fast"}, "--max-tokens", "4", "--schedule", "rate:20", "--arrival", "constant", "--requests", "10")
	_, recs := readTrace(t, tr)
	var sched []int64
	for _, rec := range recs {
		if rec.Sent < rec.Scheduled || rec.Sent == 0 {
			t.Errorf("%s: sent at %d, scheduled %d", rec.ID, rec.Sent, rec.Scheduled)
		}
		sched = append(sched, rec.Scheduled)
	}
	slices.Sort(sched)
	for i := 1; i < len(sched); i++ {
		if d := sched[i] - sched[i-1]; d != 50_000_000 {
			t.Errorf("scheduled times %v: step %d ns, want 50 ms", sched, d)
			break
		}
	}
	out, _ := mustRun(t, bin, "analyze", "--format", "csv", "--by", "label", "--metrics", "ttft,ttft_sched", tr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	head, row := strings.Split(lines[0], ","), strings.Split(lines[len(lines)-1], ",")
	vals := map[string]float64{}
	for i, h := range head {
		if i < len(row) {
			var v float64
			fmt.Sscan(row[i], &v)
			vals[h] = v
		}
	}
	if vals["ttft_sched"] < vals["ttft"] || vals["ttft"] <= 0 {
		t.Errorf("ttft %v, ttft_sched %v: want 0 < ttft ≤ ttft_sched\n%s", vals["ttft"], vals["ttft_sched"], out)
	}
}

// README: "TTFT from the first chunk with text, never from a role-only
// chunk". A server that sends the role at once and the first text 300 ms
// later: analyze's TTFT is at least 300 ms (a lower bound, which a busy
// machine can only lengthen).
func TestPromiseTTFTFromFirstText(t *testing.T) {
	bin := parallelBinary(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d, \"},\"finish_reason\":null}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "3", "--schedule", "burst:1", "--repeats", "1")
	tr := filepath.Join(dir, "role.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", ts.URL, "--model", "m", "-o", tr)
	out, _ := mustRun(t, bin, "analyze", "--format", "csv", "--by", "label", "--metrics", "ttft", tr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	row := strings.Split(lines[len(lines)-1], ",")
	var ttft float64
	fmt.Sscan(row[1], &ttft)
	if ttft < 300 {
		t.Errorf("TTFT %.1f ms: measured from the role-only chunk, not the first text 300 ms later\n%s", ttft, out)
	}
}
