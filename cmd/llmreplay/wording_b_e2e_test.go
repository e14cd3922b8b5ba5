package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// runsTrace writes a hand-made trace of n runs of concurrency 1 (one
// phase per repeat, one request each), so a per-run metric such as
// aggregate_tps has exactly n samples and a per-request one (ttft) too.
// Every request streams 4 tokens: first chunk 100 ms after it is sent,
// done 100 ms later, so every claim below is far from its bound and only
// the number of samples decides whether there is a verdict.
func runsTrace(t *testing.T, dir string, n int) string {
	t.Helper()
	const ms = int64(1_000_000)
	h := trace.Header{Label: "hand", Tokenizer: "o200k_base", Model: "m"}
	var recs []trace.Record
	for i := range n {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("c1-r%d", i), Kind: "burst",
			Concurrency: 1, InputTokens: 100, MaxTokens: 4, Repeat: i, Requests: 1})
		sent := int64(i) * 1000 * ms
		var chunks []trace.Chunk
		for j, at := range []int64{100, 150, 200} {
			chunks = append(chunks, trace.Chunk{T: sent + at*ms, Bytes: 40, Text: []string{"1", ",", " 2"}[j], Tokens: []int{1, 1, 2}[j]})
		}
		recs = append(recs, trace.Record{ID: fmt.Sprintf("r%d", i), Index: i, Phase: i, InputTokens: 100, MaxTokens: 4,
			Scheduled: sent, Sent: sent, Done: sent + 200*ms, Status: 200, Chunks: chunks, FinishReason: "length"})
	}
	p := filepath.Join(dir, fmt.Sprintf("runs%d.trace.zst", n))
	writeTrace(t, p, h, recs)
	return p
}

// goNames are fragments of the libraries' own vocabulary (package,
// type and field names) that a user of the command line must never see.
var goNames = []string{"analyze.", "analyze:", "Options.", "Config.", "fielderr", ".Metric", "Metrics)"}

// TestWordingBadNamesNameTheFlag: a metric, SLO term or goodput bound
// the tools do not know is refused with exit status 2 and one line that
// names the flag the user typed, the value, and where the allowed names
// are; never a Go name, and never another command's flag (bench
// --find-capacity used to answer "--slo: …" and "--range" for what was
// typed as --find-capacity and --concurrency). Nothing is sent: every
// case fails before a server would be started.
func TestWordingBadNamesNameTheFlag(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	tr := runsTrace(t, dir, 2)
	claims := filepath.Join(dir, "bad.claims")
	if err := os.WriteFile(claims, []byte("# a published table\nttft_p50 < 10s\n\nttftx_p50 <= 1s # a typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "r.html")
	results := filepath.Join(dir, "results")
	cases := []struct {
		args []string
		want []string // all in the one line of stderr
		not  []string // besides goNames
	}{
		{[]string{"check", tr, "--claim", "ttftx_p50<=1s"},
			[]string{`--claim "ttftx_p50<=1s"`, `metric "ttftx_p50" is unknown`, "llmreplay analyze --list-metrics"}, nil},
		{[]string{"check", tr, "--claims", claims},
			[]string{"--claims " + claims + ", line 4", `"ttftx_p50 <= 1s"`, `metric "ttftx_p50" is unknown`, "llmreplay analyze --list-metrics"}, nil},
		{[]string{"check", tr, "--claim", "# only a comment"},
			[]string{"--claim is empty", "per_stream_tps{concurrency=1} >= 490"}, []string{"empty claim"}},
		{[]string{"report", tr, "-o", html, "--claim", "ttftx_p50<=1s"},
			[]string{`--claim "ttftx_p50<=1s"`, `metric "ttftx_p50" is unknown`, "llmreplay analyze --list-metrics"}, nil},
		{[]string{"analyze", tr, "--metrics", "ttft_p50,ttftx_p50"},
			[]string{`--metrics "ttftx_p50"`, `metric "ttftx_p50" is unknown`, "llmreplay analyze --list-metrics"}, nil},
		{[]string{"analyze", tr, "--slo", "ttftx=1s"},
			[]string{"--slo", `"ttftx"`, "use ttft, tpot or e2e"}, nil},
		{[]string{"check", tr, "--claim", "ttft_p50 < 10s", "--slo", "ttft=abc"},
			[]string{"--slo", "ttft=abc is not a duration", "2s or 50ms"}, nil},
		{[]string{"analyze", tr, "--capacity-slo", "ttftx_p90<=1s"},
			[]string{"--capacity-slo", `"ttftx_p90<=1s"`, `no metric "ttftx_p90"`, "use ttft, tpot or e2e at a percentile", "goodput>=P%"}, nil},
		{[]string{"capacity", "--results", results, "--slo", "ttftx_p90<=1s"},
			[]string{"--slo", `"ttftx_p90<=1s"`, `no metric "ttftx_p90"`, "use ttft, tpot or e2e at a percentile"}, nil},
		{[]string{"capacity", "--results", results, "--slo", "ttft_p90<=1s", "--goodput-bounds", "ttftx=1s"},
			[]string{"--goodput-bounds", `"ttftx"`, "use ttft, tpot or e2e"}, nil},
		{[]string{"capacity", "--from", tr, "--slo", "goodput>=95%", "--goodput-bounds", "ttft=-1s"},
			[]string{"--goodput-bounds", "ttft=-1s is not positive"}, nil},
		{[]string{"capacity", "--from", tr, "--slo", "ttftx_p90<=1s"},
			[]string{"--slo", `no metric "ttftx_p90"`}, nil},
		{[]string{"bench", "--results", results, "--find-capacity", "ttftx_p90<=1s"},
			[]string{"--find-capacity", `"ttftx_p90<=1s"`, `no metric "ttftx_p90"`, "use ttft, tpot or e2e at a percentile"}, []string{"--slo"}},
		{[]string{"bench", "--results", results, "--find-capacity", "ttft_p90<=1s,"},
			[]string{"--find-capacity", `"ttft_p90<=1s,"`, "empty term"}, []string{"--slo", "empty claim"}},
		{[]string{"bench", "--results", results, "--find-capacity="},
			[]string{"--find-capacity is empty", "--find-capacity 'ttft_p90<=1s'"}, []string{"--slo"}},
		{[]string{"bench", "--results", results, "--find-capacity", "ttft_p90<=1s", "--concurrency", "0,8"},
			[]string{"--concurrency 0", "--find-capacity", "from 1 to"}, []string{"--range", "--slo"}},
	}
	for _, c := range cases {
		out, errs, code := run(t, nil, bin, c.args...)
		line := strings.TrimSpace(errs)
		if code != 2 || strings.Count(line, "\n") != 0 || line == "" {
			t.Errorf("%q: exit %d, stderr %q: want exit 2 and one line\n%s", c.args, code, errs, out)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%q: %q lacks %q", c.args, line, w)
			}
		}
		for _, n := range append(c.not, goNames...) {
			if strings.Contains(line, n) {
				t.Errorf("%q: %q says %q", c.args, line, n)
			}
		}
	}
	if _, err := os.Stat(html); err == nil {
		t.Errorf("report wrote %s although its claim was refused", html)
	}
	if _, err := os.Stat(results); err == nil {
		t.Errorf("%s was created although every capacity and bench case was refused", results)
	}
}
