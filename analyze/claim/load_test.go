package claim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
)

// TestLoadSaysWhereABadClaimCameFrom: claims given as text come first,
// then the file's; a bad one is a *SourceError naming the file (none for
// text) and its line, and a file that cannot be opened says so.
func TestLoadSaysWhereABadClaimCameFrom(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.claims")
	os.WriteFile(good, []byte("# published\nttft_p50{concurrency=1} <= 200ms\n\nper_stream_tps >= 10 # floor\n"), 0o644)
	bad := filepath.Join(dir, "bad.claims")
	os.WriteFile(bad, []byte("ttft_p50 <= 1s\nspeed >= 3\n"), 0o644)
	for _, c := range []struct {
		name     string
		texts    []string
		file     string
		want     []string // the claims' metrics, in order
		wantFile string   // the SourceError's File; "-" for no error
		open     bool
		line     int
	}{
		{"texts then file", []string{"e2e_p90 < 3s"}, good, []string{"e2e_p90", "ttft_p50", "per_stream_tps"}, "-", false, 0},
		{"nothing", nil, "", nil, "-", false, 0},
		{"bad text", []string{"ttft_p50 <= 1s", "ttft <= "}, good, nil, "", false, 0},
		{"bad line", nil, bad, nil, bad, false, 2},
		{"no file", nil, filepath.Join(dir, "none.claims"), nil, filepath.Join(dir, "none.claims"), true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, err := Load(c.texts, c.file)
			if c.wantFile == "-" {
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, cl := range cs {
					got = append(got, cl.Metric)
				}
				if strings.Join(got, " ") != strings.Join(c.want, " ") {
					t.Errorf("claims %q, want %q", got, c.want)
				}
				return
			}
			var se *SourceError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is no *SourceError", err)
			}
			if se.File != c.wantFile || se.Open != c.open {
				t.Errorf("File %q Open %v, want %q %v", se.File, se.Open, c.wantFile, c.open)
			}
			var pe *ParseError
			if errors.As(se.Err, &pe) != !c.open {
				t.Errorf("a claim that does not parse must carry its *ParseError: %v", se.Err)
			} else if pe != nil && pe.Line != c.line {
				t.Errorf("line %d, want %d", pe.Line, c.line)
			}
		})
	}
}

// TestCheckStatedRefusesWhatCannotBeUsed: a floor below one sample and an
// unknown format are refused naming their field; the verdicts are then
// written in the stated format.
func TestCheckStatedRefusesWhatCannotBeUsed(t *testing.T) {
	for _, c := range []struct {
		min    int
		format string
		want   string
	}{
		{1, "text", ""},
		{3, "json", ""},
		{0, "text", "claim: CheckOptions: MinSamples 0: give at least 1"},
		{-2, "json", "claim: CheckOptions: MinSamples -2: give at least 1"},
		{3, "yaml", `claim: CheckOptions: unknown Format "yaml": use text or json`},
	} {
		got := ""
		if err := (CheckOptions{MinSamples: c.min}).CheckStated(c.format); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%d %s: %q, want %q", c.min, c.format, got, c.want)
		}
	}
	vs := []Verdict{{Text: "ttft_p50 <= 1s", Verdict: Holds, Unit: "ms", Reason: "r"}}
	var text, js bytes.Buffer
	if err := WriteVerdicts(&text, vs, "text"); err != nil || !strings.HasPrefix(text.String(), "HOLDS") {
		t.Errorf("text: %q %v", text.String(), err)
	}
	if err := WriteVerdicts(&js, vs, "json"); err != nil || !strings.Contains(js.String(), `"schema": "llmreplay-check"`) {
		t.Errorf("json: %q %v", js.String(), err)
	}
}

// TestEvidenceWarningsKeepOnlyLimitsOfTheEvidence: a duplicate, truncated
// or partial trace is said before the verdicts; other warnings are the
// tables' to show.
func TestEvidenceWarningsKeepOnlyLimitsOfTheEvidence(t *testing.T) {
	res := &analyze.Result{Warnings: []analyze.Warning{
		{Code: analyze.WarnDuplicateTrace, Message: "dup"}, {Code: "errors_clustered", Message: "other"},
		{Code: analyze.WarnTruncated, Message: "cut"}, {Code: analyze.WarnPartial, Message: "partial"},
	}}
	var got []string
	for _, w := range EvidenceWarnings(res) {
		got = append(got, w.Message)
	}
	if strings.Join(got, ",") != "dup,cut,partial" {
		t.Errorf("got %q", got)
	}
}
