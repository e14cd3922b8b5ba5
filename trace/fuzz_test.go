package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// writeFuzzSeeds commits the golden trace (whole and cut short) and its
// record bodies as seed corpora, so the fuzzers start from real files.
func writeFuzzSeeds(t *testing.T, golden []byte) {
	t.Helper()
	seeds := map[string]map[string][]byte{
		"FuzzReader": {
			"golden":     golden,
			"golden-cut": golden[:len(golden)*2/3],
			"small":      encodeRun(t, synthRun(synthConfig{Requests: 3, Tokens: 8, Concurrency: 2, Seed: 1}), 0),
		},
		"FuzzRecordV1": {},
		"FuzzScrapeV1": {},
	}
	for i, g := range goldenV13Scrapes {
		seeds["FuzzScrapeV1"]["golden-"+strconv.Itoa(i)] = appendScrapeV1(nil, &g.s)
	}
	for i, r := range goldenRecords(FormatMinor) {
		seeds["FuzzRecordV1"]["golden-"+strconv.Itoa(i)] = appendRecordV1(nil, &r)
	}
	for target, files := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
			testutil.WriteFile(t, filepath.Join(dir, name), []byte(content))
		}
	}
}

// FuzzReader feeds arbitrary files to the reader: it must never panic, hang
// or allocate without bound, and every record it does return must survive
// a round trip through the writer's encoding.
func FuzzReader(f *testing.F) {
	if golden, err := os.ReadFile(goldenName(1, 0)); err == nil {
		f.Add(golden)
	}
	f.Add(compress(f, rawStream(2, 0, "{}")))
	f.Add(compress(f, entry(rawStream(1, 0, "{}"), tagRecord, appendRecordV1(nil, &goldenV1Records[1]))))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		defer r.Close()
		r.IncludeScrapes()
		for n := 0; r.Scan(); n++ {
			if s := r.Scrape(); s != nil {
				checkScrapeReencode(t, s)
				continue
			}
			checkReencode(t, r.Record())
		}
		if r.Err() != nil && r.Truncated() {
			t.Fatal("both an error and a truncated tail")
		}
	})
}

// FuzzRecordV1 feeds arbitrary bodies straight to the v1 record decoder,
// past the zstd layer that makes most mutations of a whole file useless.
func FuzzRecordV1(f *testing.F) {
	for _, r := range goldenRecords(FormatMinor) {
		f.Add(appendRecordV1(nil, &r))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var d v1Decoder
		rec, err := d.decode(string(body))
		if err != nil {
			return
		}
		checkReencode(t, rec)
	})
}

// FuzzScrapeV1 feeds arbitrary bodies to the scrape decoder (1.3): it must
// never panic or allocate past the body's size, and what it returns must
// survive a round trip.
func FuzzScrapeV1(f *testing.F) {
	for _, g := range goldenV13Scrapes {
		f.Add(appendScrapeV1(nil, &g.s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var s Scrape
		if err := decodeScrapeV1(string(body), &s); err != nil {
			return
		}
		if len(s.Samples) > len(body)/10 {
			t.Fatalf("%d samples from a %d-byte body", len(s.Samples), len(body))
		}
		checkScrapeReencode(t, &s)
	})
}

func checkScrapeReencode(t *testing.T, s *Scrape) {
	t.Helper()
	want := *s
	want.Samples = append([]Sample(nil), s.Samples...)
	// Strings past the writer's limits are cut when written: a body made
	// by hand can hold longer ones.
	for _, v := range []string{want.Source, want.Target, want.Error} {
		if len(v) > maxScrapeText {
			return
		}
	}
	for _, x := range want.Samples {
		if len(x.Name) > maxSampleText || len(x.Labels) > maxSampleText {
			return
		}
	}
	var got Scrape
	if err := decodeScrapeV1(string(appendScrapeV1(nil, &want)), &got); err != nil {
		t.Fatalf("re-encoding a decoded scrape: %v", err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("re-encoded scrape differs (-want +got):\n%s", diff)
	}
}

func checkReencode(t *testing.T, rec *Record) {
	t.Helper()
	want := copyRecord(rec)
	// A record's shard is carried by the shard entry before it, not by
	// its body: a body alone decodes without one.
	want.Shard = nil
	var d v1Decoder
	got, err := d.decode(string(appendRecordV1(nil, &want)))
	if err != nil {
		t.Fatalf("re-encoding a decoded record: %v", err)
	}
	if diff := cmp.Diff(&want, got, cmpRecords); diff != "" {
		t.Fatalf("re-encoded record differs (-want +got):\n%s", diff)
	}
}
