package main

import (
	"path/filepath"
	"strings"
	"testing"
)

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
