package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Metric names as people type them: any percentile, and both the flag
// and the table spelling of a name.

// TestAnyPercentileThroughTheBinary: a user asks for percentiles the
// standard columns do not have. writeAnalyzeTrace's requests all wait
// 50 ms for their first token and stream one token every 2 ms, so at
// concurrency 4 ttft_p95 = 50 and itl_p75 = 2 whatever the method. The
// table has the columns, json the values, check judges a claim on
// ttft_p95, and a percentile that is not written as one is refused in
// one line with exit 2.
func TestAnyPercentileThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
	tr := filepath.Join(t.TempDir(), "run.trace.zst")
	writeAnalyzeTrace(t, tr, "vllm", 2, 1, 4)
	run := func(args ...string) (string, string, int) { t.Helper(); return runCap(t, bin, args...) }

	out, errs, code := run("analyze", "--metrics", "ttft_p95,itl_p75", tr)
	if code != 0 {
		t.Fatalf("analyze: exit %d\n%s", code, errs)
	}
	var row4 string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "vllm" && f[1] == "4" {
			row4 = l
		}
	}
	if !strings.Contains(out, "ttft_p95") || !strings.Contains(out, "itl_p75") || !strings.Contains(row4, "50.0") || !strings.Contains(row4, "2.00") {
		t.Errorf("table lacks the percentile columns or their values (row %q):\n%s", row4, out)
	}

	out, _, code = run("analyze", "--metrics", "ttft_p95,e2e_p99.9", "--format", "json", tr)
	var doc struct {
		Groups []analyzedGroup `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	for _, g := range doc.Groups {
		if v := g.Metrics["ttft_p95"].Value; v == nil || *v != 50 {
			t.Errorf("group %v: ttft_p95 = %v, want 50", g.Keys, v)
		}
		if g.Metrics["e2e_p99.9"].Value == nil {
			t.Errorf("group %v: no e2e_p99.9", g.Keys)
		}
	}

	out, errs, code = run("check", "--claim", "ttft_p95{concurrency=4} < 2s", "--accept-point", tr)
	if code != 0 || !strings.Contains(strings.ToLower(out), "holds") {
		t.Errorf("check ttft_p95: exit %d\n%s%s", code, out, errs)
	}

	_, errs, code = run("analyze", "--metrics", "ttft_p05", tr)
	if code != 2 || !strings.Contains(errs, "shortest form") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("ttft_p05: exit %d, stderr %q", code, errs)
	}
}

// TestBothSpellingsAccepted: where people type a name, both its flag
// spelling and its table spelling work, through the built binary: a flag
// written input_tokens (as claims and tables write it), a claim or a
// grouping key written input-tokens (as the flag is), a metric written
// per-stream-tps. Each reads as the canonical name.
func TestBothSpellingsAccepted(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.workload.zst")
	if o, e, code := run(t, nil, bin, "workload", "build", "--input_tokens", "100", "--max_tokens", "8", "--schedule", "burst:1", "--repeats", "1", "-o", wl); code != 0 || !strings.Contains(o, "100 input tokens") {
		t.Fatalf("--input_tokens: exit %d\n%s%s", code, o, e)
	}
	sample := filepath.Join("..", "..", "traces", "samples", "vllm-rtx5090-bf16.trace.zst")
	o, e, code := run(t, nil, bin, "analyze", sample, "--by", "input-tokens", "--metrics", "per-stream-tps,ttft-p95", "--format", "csv")
	if code != 0 || !strings.HasPrefix(o, "label,input_tokens,per_stream_tps,per_stream_tps_lo,per_stream_tps_hi,ttft_p95,") {
		t.Errorf("analyze --by input-tokens --metrics per-stream-tps: exit %d\n%s%s", code, o, e)
	}
	for _, c := range []string{"per_stream_tps{concurrency=1,input_tokens=800} > 1", "per-stream-tps{concurrency=1,input-tokens=800} > 1"} {
		o, e, code := run(t, nil, bin, "check", sample, "--claim", c)
		if code != 0 || !strings.Contains(o, "HOLDS") || !strings.Contains(o, "per_stream_tps{concurrency=1,input_tokens=800} > 1") && !strings.Contains(o, c) {
			t.Errorf("check %q: exit %d\n%s%s", c, code, o, e)
		}
	}
}
