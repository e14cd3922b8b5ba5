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
	bin, dir := parallelBinary(t), t.TempDir()
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

// verdict runs check and returns its one verdict line and exit status.
func verdict(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	out, errs, code := run(t, nil, bin, append([]string{"check"}, args...)...)
	if code == 2 {
		t.Fatalf("check %q: exit 2: %s", args, errs)
	}
	return strings.TrimSpace(out), code
}

// TestWordingCheckSamplesOneRule: check states one number of samples a
// verdict needs, and it is the number the code requires. Two runs used
// to read "at least 3 are needed: 4 more run(s) … would bound it" — a
// minimum of 3 beside a count adding up to 6. Now: a median needs 6
// samples for its 95% interval (adding the "more" the message names gives
// a verdict, one fewer does not); --min-samples (default 3) is a floor on
// top and the whole rule for a _mean or an --accept-point value; and
// report's claims follow the same rule.
func TestWordingCheckSamplesOneRule(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := map[int]string{}
	for _, n := range []int{1, 2, 3, 5, 6} {
		tr[n] = runsTrace(t, dir, n)
	}
	const agg = "aggregate_tps{concurrency=1} >= 1"
	const ttft = "ttft_p50{concurrency=1} < 10s"
	cases := []struct {
		n    int
		args []string
		code int
		want []string
		not  []string
	}{
		// The interval's number, said once, with the runs that reach it.
		{2, []string{"--claim", agg}, exitInconclusive,
			[]string{"2 sample(s); the 95% interval of a median needs at least 6: 4 more run(s) of this level (--repeats 6 in all) would bound it"},
			[]string{"at least 3"}},
		{2, []string{"--claim", ttft}, exitInconclusive,
			[]string{"2 sample(s); the 95% interval of a median needs at least 6: 4 more successful request(s) would bound it"},
			[]string{"at least 3"}},
		// Past the floor, the reason also offers --accept-point.
		{3, []string{"--claim", agg}, exitInconclusive,
			[]string{"3 sample(s); the 95% interval of a median needs at least 6: 3 more run(s) of this level (--repeats 6 in all) would bound it", "--accept-point"}, nil},
		{5, []string{"--claim", agg}, exitInconclusive,
			[]string{"5 sample(s); the 95% interval of a median needs at least 6: 1 more run(s)"}, nil},
		// 6 in all, as promised: a verdict, no --min-samples needed.
		{6, []string{"--claim", agg}, 0, []string{"HOLDS", "the whole 95% interval is on one side of the bound"}, nil},
		{6, []string{"--claim", ttft}, 0, []string{"HOLDS", "the whole 95% interval is on one side of the bound"}, nil},
		// --min-samples above the interval's need is the number said.
		{6, []string{"--claim", agg, "--min-samples", "10"}, exitInconclusive,
			[]string{"6 sample(s); a verdict needs at least 10: 4 more run(s) of this level (--repeats 10 in all) would give one"}, nil},
		// No interval (a mean) or a point judged as such: the floor alone.
		{2, []string{"--claim", "ttft_mean{concurrency=1} < 10s"}, exitInconclusive,
			[]string{"2 sample(s); a verdict needs at least 3: 1 more successful request(s) would give one"}, []string{"at least 6"}},
		{3, []string{"--claim", "ttft_mean{concurrency=1} < 10s"}, 0, []string{"HOLDS"}, nil},
		{2, []string{"--claim", agg, "--accept-point"}, exitInconclusive,
			[]string{"2 sample(s); a verdict needs at least 3: 1 more run(s) of this level (--repeats 3 in all) would give one"}, []string{"at least 6"}},
		{3, []string{"--claim", agg, "--accept-point"}, 0, []string{"HOLDS", "point estimates accepted"}, nil},
		// The help's single published run: --accept-point --min-samples 1.
		{1, []string{"--claim", agg, "--accept-point", "--min-samples", "1"}, 0, []string{"HOLDS", "point estimates accepted"}, nil},
	}
	for _, c := range cases {
		line, code := verdict(t, bin, append([]string{tr[c.n]}, c.args...)...)
		if code != c.code {
			t.Errorf("%d runs, %q: exit %d, want %d\n%s", c.n, c.args, code, c.code, line)
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%d runs, %q: %q lacks %q", c.n, c.args, line, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(line, w) {
				t.Errorf("%d runs, %q: %q says %q", c.n, c.args, line, w)
			}
		}
	}
	// report --claim judges as check does: 3 runs with --accept-point
	// hold there too (its own floor of 6 refused them).
	html := filepath.Join(dir, "r.html")
	mustRun(t, bin, "report", tr[3], "-o", html, "--accept-point", "--claim", agg)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `class="verdict-HOLDS"`) {
		t.Errorf("report with 3 runs and --accept-point: no HOLDS verdict in the page")
	}
	// --min-samples below 1 is refused in the user's words.
	if _, errs, code := run(t, nil, bin, "check", tr[6], "--claim", agg, "--min-samples", "0"); code != 2 || !strings.Contains(errs, "--min-samples 0: give at least 1") {
		t.Errorf("--min-samples 0: exit %d, %s", code, errs)
	}
}
