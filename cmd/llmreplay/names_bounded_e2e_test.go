package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/safetext"
)

// TestReplayBoundsModelAndLabel: replay takes a model id and a label of at
// most safetext.MaxName bytes. A longer --model or --label is bad input
// (exit 2, one line naming the flag and the bound), and a server whose
// model list names a 1 MB model is refused before anything is sent, with
// the fix (--model). Before the fix the 1 MB id went into the trace
// header, and from there into every table, report and CSV row.
func TestReplayBoundsModelAndLabel(t *testing.T) {
	bin := parallelBinary(t)
	huge := strings.Repeat("m", 1_000_000) // the model list itself is read up to 1 MiB
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, huge)
			return
		}
		if r.Method == http.MethodPost {
			posts++
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	wl := smallWorkload(t, bin)
	dir := t.TempDir()
	long := strings.Repeat("x", safetext.MaxName+1)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", long}, []string{"--model", fmt.Sprint(safetext.MaxName)}},
		{[]string{"--model", "m", "--label", long}, []string{"--label", fmt.Sprint(safetext.MaxName)}},
		{nil, []string{"model", "1000000 bytes", "--model"}},
	} {
		tr := filepath.Join(dir, fmt.Sprintf("t%d.trace.zst", len(c.want)+len(c.args)))
		_, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", srv.URL, "-o", tr}, c.args...)...)
		if code != 2 {
			t.Errorf("%.40q: exit %d, want 2: %.300s", c.args, code, e)
		}
		oneLine(t, fmt.Sprintf("%.40q", c.args), e, c.want...)
		if len(e) > 2000 {
			t.Errorf("%.40q: the error is %d bytes long", c.args, len(e))
		}
		if _, err := os.Stat(tr); err == nil {
			t.Errorf("%.40q: a trace was written", c.args)
		}
	}
	if posts != 0 {
		t.Errorf("%d requests were sent to a server whose model id is refused", posts)
	}
	// At the bound, both are taken.
	atBound := strings.Repeat("y", safetext.MaxName)
	tr := filepath.Join(dir, "ok.trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", startSim(t, bin), "--model", atBound, "--label", atBound, "-o", tr); code != 0 {
		t.Fatalf("a model and label of %d bytes: exit %d: %s", safetext.MaxName, code, e)
	}
}

// TestLongNamesCutWhenShown: a hand-made trace with a 1 MB model id and a
// 2 MB label (which replay would refuse) makes output of bounded size:
// analyze (text, CSV, JSON), report and export show each cut at
// safetext.MaxName bytes with how much was cut. Before the fix the report
// was 50 MB and export's chunks.csv repeated the 2 MB label on every row.
func TestLongNamesCutWhenShown(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := filepath.Join(dir, "long.trace.zst")
	model, label := strings.Repeat("M", 1<<20), strings.Repeat("L", 2<<20)
	writeReportTrace(t, tr, label, model, 2, 1, 1, 4)
	const bound = 256 << 10 // what the same trace gives with short names, and then some
	check := func(what string, out []byte) {
		t.Helper()
		if len(out) > bound {
			t.Errorf("%s: %d bytes of output from a %d-byte label", what, len(out), len(label))
		}
		if strings.Contains(string(out), strings.Repeat("L", safetext.MaxName+1)) || strings.Contains(string(out), strings.Repeat("M", safetext.MaxName+1)) {
			t.Errorf("%s: a name is shown longer than %d bytes", what, safetext.MaxName)
		}
	}
	for _, format := range []string{"table", "csv", "json", "markdown"} {
		o, e, code := run(t, nil, bin, "analyze", "--format", format, tr)
		if code != 0 {
			t.Fatalf("analyze --format %s: exit %d: %.300s", format, code, e)
		}
		check("analyze --format "+format, []byte(o+e))
		if !strings.Contains(o+e, "more bytes") {
			t.Errorf("analyze --format %s does not say the label was cut", format)
		}
	}
	page := filepath.Join(dir, "r.html")
	if o, e, code := run(t, nil, bin, "report", tr, "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %.300s", code, e)
	} else {
		check("report's output", []byte(o+e))
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	check("the report", b)
	out := filepath.Join(dir, "tables")
	if o, e, code := run(t, nil, bin, "export", "--format", "csv", "-o", out, tr); code != 0 {
		t.Fatalf("export: exit %d: %.300s", code, e)
	} else {
		check("export's output", []byte(o+e))
	}
	for _, f := range []string{"requests.csv", "chunks.csv", "runs.csv"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		check(f, b)
	}
	// The trace itself is kept as it was: the cut is in what is shown.
	if h, _ := readTrace(t, tr); h.Label != label || h.Model != model {
		t.Error("the trace's own label or model changed")
	}
}
