package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// Numbers a server sends are not trusted: absurd gauges and counts are
// left out or bounded, never drawn or crashed on.

// TestReportDropsAbsurdGauges: a server whose /metrics says 1e308 requests
// are running, -Inf are waiting or its KV cache is NaN % used gets those
// readings left out of the report's server charts, which draw the sane
// ones on a sane scale, and the chart says how many readings were dropped
// and why. Before the fix the queue chart drew y="-Inf" and ticks of
// "+InfM".
func TestReportDropsAbsurdGauges(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := filepath.Join(dir, "g.trace.zst")
	writeReportTrace(t, tr, "plain", "m", 2, 0, 1, 4)
	// The same trace plus a scrape per absurd value.
	h, recs := readTrace(t, tr)
	w, err := trace.Create(tr+".tmp", h)
	if err != nil {
		t.Fatal(err)
	}
	const ms = int64(1_000_000)
	sample := func(t0 int64, running, waiting, kv float64) {
		w.WriteScrape(&trace.Scrape{T: t0 * ms, Source: trace.SourceMetrics, Target: "http://127.0.0.1:1/metrics",
			Samples: []trace.Sample{{Name: "vllm:num_requests_running", Value: running}, {Name: "vllm:num_requests_waiting", Value: waiting},
				{Name: "vllm:kv_cache_usage_perc", Value: kv}}})
	}
	sample(10, 2, 0, 0.2)                        // sane
	sample(20, 1e308, 0, 0.3)                    // an absurd count
	sample(30, 3, math.Inf(-1), math.NaN())      // non-finite
	sample(40, math.Inf(1), -5, math.MaxFloat64) // all absurd
	sample(50, 4, 1, 0.4)                        // sane
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tr+".tmp", tr); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "r.html")
	if o, e, code := run(t, nil, bin, "report", tr, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, o, e)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, id := range []string{"server-queue", "server-kv"} {
		i := strings.Index(html, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no %s chart", id)
		}
		fig := html[i : i+strings.Index(html[i:], "</figure>")]
		if m := regexp.MustCompile(`(?i)[-+]?(inf|nan)\b|e\+\d{2,}`).FindString(fig); m != "" {
			t.Errorf("chart %s draws %q:\n%s", id, m, fig)
		}
		if !strings.Contains(fig, "dropped") {
			t.Errorf("chart %s does not say readings were dropped", id)
		}
	}
	// Sane readings are all drawn: running 2, 3, 4 and waiting 0, 1 (the
	// first two scrapes of the original trace too), KV 20% and 40%.
	if !regexp.MustCompile(`id="server-queue" data-series="2" data-points="\d+"`).MatchString(html) {
		t.Error("the queue chart lost its series")
	}
}

// TestHostileCountsDoNotCrashAnalysis: absurd server counts, through the
// binary. Per-chunk counts of ±9e18 overflowed a distribution's count and
// panicked in analyze and check (makeslice: len out of range), and
// usage.completion_tokens of 9e18 gave aggregate_tps = -1.1e20. Now the
// counts are not used, the text is counted, and the warning says so.
func TestHostileCountsDoNotCrashAnalysis(t *testing.T) {
	bin := parallelBinary(t)
	path := filepath.Join(t.TempDir(), "hostile.trace.zst")
	w, err := trace.Create(path, trace.Header{
		Label: "hostile", Model: "m", API: "openai-chat",
		Phases: []trace.Phase{{Index: 0, Name: "burst-c1", Kind: "burst", Concurrency: 1, MaxTokens: 16, Requests: 6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		rec := trace.Record{ID: fmt.Sprintf("r%d", i), Index: i, MaxTokens: 16, Sent: int64(i) * 1e9, Headers: int64(i)*1e9 + 1e7, Status: 200, FinishReason: "length"}
		for j := 0; j < 16; j++ {
			c := trace.Chunk{T: int64(i)*1e9 + 2e7 + int64(j)*1e7, Bytes: 60, Text: fmt.Sprintf("%d, ", j+1)}
			switch i % 3 {
			case 0:
				c.Tokens = 9_000_000_000_000_000_000 // summing two overflows int64
			case 1:
				c.Tokens = -9_000_000_000_000_000_000 + j
			}
			rec.Chunks = append(rec.Chunks, c)
		}
		if i%3 == 2 {
			rec.Usage = `{"completion_tokens":9000000000000000000,"prompt_tokens":10}`
		}
		rec.Done = rec.Chunks[len(rec.Chunks)-1].T + 1e6
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"analyze", path},
		{"analyze", "--format", "json", path},
		{"check", path, "--claim", "per_stream_tps{concurrency=1} >= 1"},
	} {
		o, e, code := run(t, nil, bin, args...)
		if strings.Contains(e, "panic") || (code != 0 && code != 1) {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, o, e)
		}
		if args[0] == "analyze" && !strings.Contains(o+e, "usage_implausible") {
			t.Errorf("%v does not warn usage_implausible:\n%s\n%s", args, o, e)
		}
		if strings.Contains(o, "e+1") || strings.Contains(o, "-1.1e") {
			t.Errorf("%v shows an absurd figure:\n%s", args, o)
		}
	}
}
