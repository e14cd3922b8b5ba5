package analyze

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/llmreplay/llmreplay/trace"
)

// TestClippedAndLateFinishWarnings: hand-made records. Two of three were
// clipped by the writer (1,000 + 24 bytes not stored): clipped_text says 2
// responses and 1,024 bytes. One went on after its finish: after_finish
// says 1 and quotes its note.
func TestClippedAndLateFinishWarnings(t *testing.T) {
	h := header("A", phase(0, 1, 100, 16, 1))
	a, b, c := okRecord("a", 0, 0), okRecord("b", 0, 200), okRecord("c", 0, 400)
	a.Clipped, a.Notes = 1000, "1000 bytes of text are not kept"
	b.Clipped, b.Notes = 24, "24 bytes of text are not kept"
	c.Notes = "finish reasons after the first: stop; 3 bytes of text after the finish signal"
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: []trace.Record{a, b, c}})
	w := hasWarning(res.Warnings, WarnClipped)
	if w == nil || !strings.Contains(w.Message, "2 responses were longer than a trace keeps: 1024 bytes") {
		t.Errorf("clipped_text: %+v", w)
	}
	w = hasWarning(res.Warnings, WarnLateFinish)
	if w == nil || !strings.Contains(w.Message, "1 response went on after the finish signal") || !strings.Contains(w.Message, "c: finish reasons after the first: stop") {
		t.Errorf("after_finish: %+v", w)
	}
}

// TestDamagedTraceKeepsGoodRecords: a trace with an undecodable entry
// between good records is analysed from the good ones, with the damage said
// as a partial trace: 2 of 3 planned requests.
func TestDamagedTraceKeepsGoodRecords(t *testing.T) {
	h := header("A", phase(0, 1, 100, 16, 1))
	h.Phases[0].Requests = 3
	r1, r2 := okRecord("a", 0, 0), okRecord("c", 0, 400)
	// Build the damaged stream by hand: header + r1, a bad entry, r2.
	file := damagedTrace(t, h, &r1, &r2)
	rd, err := trace.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	an, _ := New(Options{})
	if err := an.AddReader("", "d.trace.zst", rd); err != nil {
		t.Fatalf("a damaged trace was refused: %v", err)
	}
	res := an.Result()
	if res.Traces[0].Records != 2 || !strings.Contains(res.Traces[0].Damaged, "1 entry could not be read and was skipped") {
		t.Fatalf("records %d, damaged %q", res.Traces[0].Records, res.Traces[0].Damaged)
	}
	pw := hasWarning(res.Warnings, WarnPartial)
	if pw == nil || !strings.Contains(pw.Message, "damaged: ") || !strings.Contains(pw.Message, "2 of 3 requests could be read") {
		t.Errorf("partial_trace: %+v", pw)
	}
}

// damagedTrace writes header, r1, a record whose body no longer decodes
// (its ID's length byte made the start of a varint far past the body's
// end, its entry length unchanged), and r2.
func damagedTrace(t *testing.T, h trace.Header, r1, r2 *trace.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, h, trace.WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	bad := okRecord("BADRECORDMARK", 0, 200)
	for _, r := range []*trace.Record{r1, &bad, r2} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	raw, err := dec.DecodeAll(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte("\x0dBADRECORDMARK"))
	if i < 0 {
		t.Fatal("marker not found")
	}
	raw[i] = 0x80
	enc, _ := zstd.NewWriter(nil)
	return enc.EncodeAll(raw, nil)
}

// TestCacheHitRateAndSaltedHits: three hand-made requests of a salted run
// whose server says it served 600, 200 and 900 of 1,000 prompt tokens from
// its cache. cache_hit_rate per request: 0.6, 0.2, 0.9, median 0.6.
// cache_hit_on_salted: two of them (600 and 900 > 1000/2), the first "a".
func TestCacheHitRateAndSaltedHits(t *testing.T) {
	h := header("A", phase(0, 1, 1000, 7, 1))
	h.Salt = true
	var recs []trace.Record
	for i, c := range []int{600, 200, 900} {
		r := okRecord(string(rune('a'+i)), 0, float64(200*i))
		r.InputTokens = 1000
		r.Usage = fmt.Sprintf(`{"prompt_tokens":1000,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":%d}}`, c)
		recs = append(recs, r)
	}
	res := analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	g := findGroup(t, res.Groups([]string{KeyLabel}), map[string]any{KeyLabel: "A"})
	wantValues(t, g, map[string]float64{"cache_hit_rate": 0.6, "cache_hit_rate_min": 0.2, "cache_hit_rate_max": 0.9})
	w := hasWarning(res.Warnings, WarnSaltedCacheHit)
	if w == nil || !strings.Contains(w.Message, "more than half of 2 salted prompts") || !strings.Contains(w.Message, "a: 600 of 1000 prompt tokens") {
		t.Errorf("cache_hit_on_salted: %+v", w)
	}
	// Prompts built from a request log's hash blocks share blocks by
	// design: the same hits are expected, no warning.
	h.Options = map[string]string{"block_tokens": "16"}
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	if w := hasWarning(res.Warnings, WarnSaltedCacheHit); w != nil {
		t.Errorf("a request log's salted run warned: %+v", w)
	}
	h.Options = nil
	// Unsalted (a cache study), the same counts are what was asked for.
	h.Salt = false
	res = analyzeTraces(t, Options{}, testTrace{h: h, records: recs})
	if w := hasWarning(res.Warnings, WarnSaltedCacheHit); w != nil {
		t.Errorf("an unsalted run warned: %+v", w)
	}
}
