package main

import (
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// writeTrace writes a hand-made (or rewritten) trace of h and recs.
func writeTrace(t *testing.T, path string, h trace.Header, recs []trace.Record) {
	t.Helper()
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkKernelStamped: every request kept its kernel stamps, the headers'
// stamp lies before the first chunk's, and the client's read delay after
// the stamps is kept: with perChunk (--chunk-user-times) each chunk's
// user-space time at or after its stamp, else (the default) no chunk's,
// and each request's mean and largest delay, 0 ≤ mean ≤ largest, the
// largest above 0 (a read returns after the packet's arrival).
func checkKernelStamped(t *testing.T, h trace.Header, recs []trace.Record, perChunk bool) {
	t.Helper()
	if h.Timestamps != trace.TimestampsKernel {
		t.Fatalf("trace header timestamps %q (%s); want kernel on Linux loopback", h.Timestamps, h.TimestampsNote)
	}
	chunks := 0
	for _, rec := range recs {
		if rec.Error != nil {
			t.Errorf("%s failed: %v", rec.ID, rec.Error.Message)
			continue
		}
		if strings.Contains(rec.Notes, "user-space timestamps") {
			t.Errorf("%s fell back: %s", rec.ID, rec.Notes)
			continue
		}
		if len(rec.Chunks) > 0 && (rec.UserDelayMean < 0 || rec.UserDelayMax < rec.UserDelayMean || rec.UserDelayMax == 0) {
			t.Errorf("%s: read delay mean %d, largest %d ns: want 0 ≤ mean ≤ largest, largest > 0", rec.ID, rec.UserDelayMean, rec.UserDelayMax)
		}
		for i, c := range rec.Chunks {
			chunks++
			if perChunk && (c.UserT == 0 || c.T > c.UserT) {
				t.Errorf("%s chunk %d: kernel %d, user %d: want 0 < kernel ≤ user", rec.ID, i, c.T, c.UserT)
			}
			if !perChunk && c.UserT != 0 {
				t.Errorf("%s chunk %d kept its user-space time %d without --chunk-user-times", rec.ID, i, c.UserT)
			}
			if c.T < rec.Headers {
				t.Errorf("%s chunk %d: kernel %d before the headers' stamp %d", rec.ID, i, c.T, rec.Headers)
			}
		}
	}
	if chunks == 0 {
		t.Fatal("no chunks")
	}
}

// With default flags on Linux, chunk times are the kernel's receive stamps
// (header timestamps "kernel"), each at or before the user-space time kept
// beside it; --timestamps user records user-space times only; a source that
// is not one is refused before anything runs.
func TestKernelTimestampsE2E(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	bin := builtBinary(t)
	dir, simURL, tr := replaySim(t, bin, []string{"--profile", "fast"}, "--max-tokens", "24", "--schedule", "burst:8", "--repeats", "2")
	wl := filepath.Join(dir, "w.workload.zst")
	h, recs := readTrace(t, tr)
	checkKernelStamped(t, h, recs, false)
	info, _, _ := run(t, nil, bin, "trace", "info", tr)
	if !strings.Contains(info, "timestamps: kernel") || !strings.Contains(info, "read delay:") {
		t.Errorf("trace info does not name the source and the client's read delay:\n%s", info)
	}

	// --chunk-user-times keeps every chunk's user-space time, and the
	// same summary a reader computes from them.
	tc := filepath.Join(dir, "c.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", simURL, "-o", tc, "-q", "--chunk-user-times")
	h, recs = readTrace(t, tc)
	checkKernelStamped(t, h, recs, true)
	for _, rec := range recs {
		var sum, most int64
		for _, c := range rec.Chunks {
			sum, most = sum+c.UserT-c.T, max(most, c.UserT-c.T)
		}
		if n := int64(len(rec.Chunks)); n > 0 && (rec.UserDelayMean != sum/n || rec.UserDelayMax != most) {
			t.Errorf("%s: summary %d/%d, chunks say %d/%d", rec.ID, rec.UserDelayMean, rec.UserDelayMax, sum/n, most)
		}
	}
	out, e, code := run(t, nil, bin, "analyze", tr, "--format", "json")
	if code != 0 || strings.Contains(out, "clock_step") {
		t.Errorf("analyze exit %d, or a clock step on a steady clock: %s\n%s", code, e, out)
	}

	tu := filepath.Join(dir, "u.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", simURL, "-o", tu, "-q", "--timestamps", "user")
	h, recs = readTrace(t, tu)
	if h.Timestamps != trace.TimestampsUser {
		t.Errorf("--timestamps user: header says %q", h.Timestamps)
	}
	for _, rec := range recs {
		if rec.UserDelayMean != 0 || rec.UserDelayMax != 0 {
			t.Errorf("--timestamps user: %s has a read delay %d/%d", rec.ID, rec.UserDelayMean, rec.UserDelayMax)
		}
		for _, c := range rec.Chunks {
			if c.UserT != 0 {
				t.Fatalf("--timestamps user: %s has a chunk with user_t_ns %d", rec.ID, c.UserT)
			}
		}
	}

	bad := filepath.Join(dir, "bad.trace.zst")
	_, e, code = run(t, nil, bin, "replay", wl, "--url", simURL, "-o", bad, "--timestamps", "nic")
	if code != 2 || !strings.Contains(e, "--timestamps") || !strings.Contains(e, "use kernel, user or auto") {
		t.Errorf("--timestamps nic: exit %d, %s; want 2 and the fix", code, e)
	}
	if _, err := trace.Open(bad); err == nil {
		t.Errorf("a refused run wrote %s", bad)
	}
}

// TestCapacityKeepsChunkUserTimes: a capacity search moves every round
// after the first onto the search's clock; with --chunk-user-times every
// request of every round keeps each chunk's user-space time and its read
// delays. Moving the kernel stamps alone once left only the first
// round's (21 of 344 requests here).
func TestCapacityKeepsChunkUserTimes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	bin := builtBinary(t)
	tr := filepath.Join(t.TempDir(), "c.trace.zst")
	mustRun(t, bin, "capacity", "--profile", "fast", "--max-tokens", "4", "--slo", "ttft_p90<=60s", "--range", "1:2", "--chunk-user-times", "-q", "-o", tr)
	h, recs := readTrace(t, tr)
	if phases := map[int]bool{}; len(recs) > 0 {
		for _, r := range recs {
			phases[r.Phase] = true
		}
		if len(phases) < 2 {
			t.Fatalf("%d rounds: the case needs rounds after the first", len(phases))
		}
	}
	checkKernelStamped(t, h, recs, true)
}

// Under TLS the stamp is that of the TCP read that completed the TLS
// record holding the event's last byte: the same bound as on plain TCP.
func TestKernelTimestampsTLS(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("kernel receive stamps are read on Linux only")
	}
	bin := builtBinary(t)
	srv := &pacedServer{tokens: 12, gap: 2 * time.Millisecond}
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "12", "--schedule", "closed:2", "--requests", "6")
	tr := filepath.Join(dir, "tls.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", ts.URL, "--model", "paced", "--insecure", "-o", tr, "-q")
	h, recs := readTrace(t, tr)
	checkKernelStamped(t, h, recs, false)
}
