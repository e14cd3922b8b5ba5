package render

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

func summaryText(t *testing.T, res *analyze.Result, o SummaryOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderSummaryText(&b, BuildSummary(res, o)); err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > SummaryWidth {
			t.Errorf("line %d is %d columns, more than %d: %q", i+1, n, SummaryWidth, l)
		}
	}
	return b.String()
}

// TestSummaryByHand: the two hand-made labels (analyze's twoLabels). At
// concurrency 2, A's TTFTs are 100 and 200 ms: p50 150, p90 at position
// 0.9 between them 190, p95 195, p99 199 (linear interpolation, worked by
// hand); B's one streamed request and one that arrived in one piece get
// B's not_streamed note; B's block compares with A's at each level. The
// whole text is golden.
func TestSummaryByHand(t *testing.T) {
	res := twoLabels(t)
	text := summaryText(t, res, SummaryOptions{})
	blocks := strings.Split(text, "\n\n")
	// Level-major: A then B at concurrency 1, then at 2.
	for i, want := range []string{"A · concurrency 1 · 1 request ok · 1 run", "B · concurrency 1", "A · concurrency 2 · 2 requests ok · 1 run", "B · concurrency 2"} {
		if i+1 >= len(blocks) || !strings.HasPrefix(blocks[i+1], want) {
			t.Fatalf("block %d does not start %q:\n%s", i+1, want, text)
		}
	}
	if !strings.Contains(blocks[3], "  TTFT        150      190      195      199\n") {
		t.Errorf("A at concurrency 2: TTFT percentiles are not 150/190/195/199:\n%s", blocks[3])
	}
	if !strings.Contains(blocks[4], "warnings [1] not_streamed") || !strings.Contains(blocks[4], "vs A: per stream no significant change") {
		t.Errorf("B at concurrency 2 lacks its warning mark or comparison:\n%s", blocks[4])
	}
	if !strings.Contains(text, "[1] not_streamed {label=B,concurrency=2,input_tokens=100}: responses arrived in one piece") {
		t.Errorf("no note for the mark:\n%s", text)
	}
	check(t, "summary_two_labels.golden.txt", []byte(text))
}

// TestSummaryFailures: a level where some requests failed says how many
// and why in its head, with the server's words as a note; a level where
// all failed shows no figure at all (no "—" rows pretending to measure).
func TestSummaryFailures(t *testing.T) {
	text := summaryText(t, failingTrace(t), SummaryOptions{})
	testutil.Contains(t, "summary", text,
		"srv · concurrency 1 · 1 of 2 failed: http-status [1] · 1 run\n  tok/s  per stream 100 [—, —]   aggregate 100 [—, —]\n",
		"srv · concurrency 2 · all 2 failed: http-status [2] · 1 run\n\n",
		"[1] failed requests (http-status): HTTP 500 Internal Server Error: boom",
		"[2] failed requests (http-status): HTTP 400 Bad Request: request (5000 tokens) exceeds the available",
	)
}

// Wrap keeps every line within its width, breaks only at spaces, and
// gives the text back when the continuation indent is read as a space.
func TestWrap(t *testing.T) {
	text := "[2] failed requests (http-status): HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"
	lines := Wrap(text, 40, "    ")
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 40 {
			t.Errorf("line longer than 40: %q", l)
		}
	}
	if back := strings.ReplaceAll(strings.Join(lines, "\n"), "\n    ", " "); back != text {
		t.Errorf("unwrapped %q, want %q", back, text)
	}
	if got := Wrap("a-very-long-word-that-does-not-fit x", 10, "  "); len(got) != 2 || got[0] != "a-very-long-word-that-does-not-fit" {
		t.Errorf("a long word: %q", got)
	}
}

func TestFormatInterval(t *testing.T) {
	inf := func(s int) float64 {
		if s < 0 {
			return negInf
		}
		return posInf
	}
	for _, c := range []struct {
		v    analyze.Value
		want string
	}{
		{analyze.Value{Value: 316, Lo: 312.4, Hi: 320.2, N: 24}, "316 [312, 320]"},
		{analyze.Value{Value: 303, Lo: 296, Hi: inf(1), N: 5}, "303 [296, —]"},
		{analyze.Value{Value: 5.5, Lo: inf(-1), Hi: inf(1), N: 2}, "5.50 [—, —]"},
		{analyze.Value{Value: 42, Lo: nan, Hi: nan, N: 1}, "42.0"},
		{analyze.Value{Value: nan, Lo: nan, Hi: nan}, "—"},
	} {
		if got := FormatInterval(c.v); got != c.want {
			t.Errorf("FormatInterval(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}

var (
	nan    = math.NaN()
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)
