package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestWatchPID: replay --watch-pid samples the server process (here the
// simulator, a process of its own) into the trace; trace info counts the
// samples and analyze reports the process's peak memory. A pid that is
// not running is bad input naming the flag.
func TestWatchPID(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("--watch-pid reads Linux /proc")
	}
	bin := builtBinary(t)
	// The peak is over samples taken inside the run. A sample that takes
	// long spaces the next out to 10× its time (the scrape loop's
	// backoff), so on a loaded machine a run of a second could see few or
	// none (a 48-token run beside three test suites had none, and 600
	// tokens at the profile's own pace, meant to last three seconds, took
	// 1.9 s at a load average of 20 and had none either): 300 tokens paced
	// 20 ms apart keep the run open for six seconds whatever the load.
	simURL, pid := startSimProcess(t, bin, "--profile", "llamacpp-rtx5090-q4km", "--token-interval", "20ms")
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "300", "--schedule", "burst:4", "--repeats", "1")
	tr := filepath.Join(dir, "w.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "--watch-pid", strconv.Itoa(pid), "--server-metrics-interval", "50ms", "-q", "-o", tr)
	if code != 0 || !strings.Contains(e, "watching pid "+strconv.Itoa(pid)+" (llmreplay): memory, CPU time and threads every 50ms into the trace") {
		t.Fatalf("exit %d, stderr:\n%s", code, e)
	}
	out, _, code := run(t, nil, bin, "trace", "info", tr)
	if code != 0 || !regexp.MustCompile(`process: +\d+ scrapes of pid \d+ \(llmreplay\), one every \S+, \d+ samples each`).MatchString(out) {
		t.Errorf("trace info:\n%s", out)
	}
	out, e, code = run(t, nil, bin, "analyze", tr, "--metrics", "process_rss_peak,process_cpu_cores", "--format", "json")
	if code != 0 {
		t.Fatalf("analyze exit %d: %s", code, e)
	}
	var doc struct {
		Groups []analyzedGroup `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Groups) == 0 {
		t.Fatalf("%v:\n%.1500s", err, out)
	}
	// A Go program serving HTTP holds several MB and less than 10 GB.
	rss := doc.Groups[0].Metrics["process_rss_peak"].Value
	if rss == nil || *rss < 2 || *rss > 10_000 {
		t.Errorf("process_rss_peak %v MB", rss)
	}
	_, e, code = run(t, nil, bin, "replay", wl, "--url", simURL, "--watch-pid", "999999999", "-o", filepath.Join(dir, "x.trace.zst"))
	if code != 2 || !strings.Contains(e, "--watch-pid") || !strings.Contains(e, "no process 999999999") {
		t.Errorf("a pid that is not running: exit %d, stderr:\n%s", code, e)
	}
}
