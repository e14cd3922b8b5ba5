package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmreplay/llmreplay/internal/golden"
	"github.com/llmreplay/llmreplay/internal/testutil"
	"github.com/llmreplay/llmreplay/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const goldenTrace = "../../traces/v1/golden-1.0.trace.zst"

func check(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update, "go test ./trace/inspect -update")
}

func open(t *testing.T, path string) *trace.Reader {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestInfoOfEveryFormatVersion: trace info of the golden trace of every
// format version (and a merged one) is what its golden file says, line
// for line: the header, phases, counts, shards, scrapes and clock.
func TestInfoOfEveryFormatVersion(t *testing.T) {
	for _, p := range testutil.Glob(t, "../../traces/v1/*.trace.zst", 7) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			r := open(t, p)
			var b bytes.Buffer
			Read(r, p).WriteText(&b)
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			check(t, "info-"+strings.TrimSuffix(filepath.Base(p), ".trace.zst")+".golden", b.Bytes())
		})
	}
}

// TestInfoOfCutShortTrace cuts the golden trace short, as a killed run
// leaves it, and reads it as standard input: info counts what is there,
// says the tail is missing and gives no file size.
func TestInfoOfCutShortTrace(t *testing.T) {
	data, err := os.ReadFile(goldenTrace)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(data[:len(data)-40]))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Read(r, "-").WriteText(&b)
	out := b.String()
	testutil.Contains(t, "trace info", out, "cut-short tail", "records:    6 (", "file:       format 1.0")
	if notes := Notes("-", r); len(notes) != 1 || !strings.Contains(notes[0], "cut-short tail") {
		t.Errorf("notes %q, want the cut-short tail's", notes)
	}
}

// TestRecordsAreExact: decoding trace cat's JSON lines gives back what
// the trace holds, record for record.
func TestRecordsAreExact(t *testing.T) {
	var b bytes.Buffer
	if err := Records(json.NewEncoder(&b), open(t, goldenTrace), false); err != nil {
		t.Fatal(err)
	}
	r := open(t, goldenTrace)
	lines := bufio.NewScanner(&b)
	n := 0
	for r.Scan() {
		if !lines.Scan() {
			t.Fatalf("%d records printed, the trace has more", n)
		}
		var got trace.Record
		if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		if d := cmp.Diff(r.Record(), &got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("record %d (-trace +cat):\n%s", n, d)
		}
		n++
	}
	if lines.Scan() {
		t.Fatalf("more lines printed than the trace's %d records", n)
	}
	if n != 7 {
		t.Fatalf("the golden trace has %d records, want 7", n)
	}
}

// TestRecordsWithoutChunks: --no-chunks leaves the chunks out and gives
// their number.
func TestRecordsWithoutChunks(t *testing.T) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := Records(enc, open(t, goldenTrace), true); err != nil {
		t.Fatal(err)
	}
	check(t, "records-no-chunks.golden", b.Bytes())
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["chunks"]; ok {
			t.Errorf("chunks printed: %s", line)
		}
		if _, ok := m["chunk_count"]; !ok {
			t.Errorf("no chunk_count: %s", line)
		}
	}
}

// TestScrapesLeaveOutClockReadings: the scrapes of a 1.5 trace are its
// /metrics and process samples, never the client's clock readings.
func TestScrapesLeaveOutClockReadings(t *testing.T) {
	var b bytes.Buffer
	if err := Scrapes(json.NewEncoder(&b), open(t, "../../traces/v1/golden-1.5.trace.zst")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var s map[string]any // a sample's value may be "-Inf": read as written
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		if s["source"] == trace.SourceClock {
			t.Errorf("a clock reading printed: %s", line)
		}
		n++
	}
	if n == 0 {
		t.Error("no scrape printed")
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.00 MiB", 5 << 30: "5.00 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
