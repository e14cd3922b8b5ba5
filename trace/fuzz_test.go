package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
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
		for n := 0; r.Scan(); n++ {
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
