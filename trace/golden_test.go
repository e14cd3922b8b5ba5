package trace

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden trace of the version this build writes (never older ones), and the fuzz seeds")

// goldenDir holds one golden trace per format version ever written. Files
// of older versions are never rewritten: they prove that this build still
// reads what earlier builds wrote.
const goldenDir = "../traces"

// goldenV1Header and goldenV1Records are the content of every 1.x golden
// trace, written by hand to touch every field: a warm-up, reasoning,
// per-chunk token counts, server send times, usage, timings, an HTTP error
// with a body, a reset mid-stream and a refused connection.
var goldenV1Header = Header{
	Format:         FormatName,
	Major:          1,
	Minor:          0,
	ToolVersion:    "0.1.0",
	WorkloadDigest: "sha256:9b1c2a0f6d3e4b5a69788796a5b4c3d2e1f00112233445566778899aabbccdd",
	Tokenizer:      "cl100k_base",
	Shape:          "chat",
	Phases: []Phase{
		{Index: 0, Name: "warmup", Kind: "warmup", Concurrency: 1, InputTokens: 64, MaxTokens: 8, Repeat: 1, Requests: 1},
		{Index: 1, Name: "c2-in1k", Kind: "closed", Concurrency: 2, InputTokens: 1000, MaxTokens: 16, Repeat: 2, Requests: 4},
		{Index: 2, Name: "rate5", Kind: "open", Concurrency: 0, InputTokens: 40000, MaxTokens: 16, Repeat: 1, Rate: 5.5, Requests: 2},
	},
	Reference:  " 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
	URL:        "http://127.0.0.1:8080/v1/chat/completions",
	API:        "openai-chat",
	Model:      "qwen3-0.6b",
	Label:      "golden v1: sim fast",
	Simulated:  true,
	SimProfile: "fast",
	StartWall:  "2026-12-02T13:00:00.123456789Z",
	Host:       Host{OS: "linux", Arch: "amd64", CPU: "Test CPU @ 2.0GHz", Cores: 2, GoVersion: "go1.26.8", Hostname: "golden"},
	Salt:       true,
	SaltSeed:   -42,
	Options:    map[string]string{"timeout": "10m0s", "idle-timeout": "30s", "warmup": "1"},
}

var goldenV1Records = []Record{
	{
		ID: "warmup-0", Index: 0, Phase: 0, Warmup: true, InputTokens: 64, MaxTokens: 8,
		Scheduled: 0, Sent: 41_250, Headers: 3_100_200, Done: 19_870_001, Status: 200,
		Chunks: []Chunk{
			{T: 12_000_333, Bytes: 190, Text: " 1"},
			{T: 14_100_999, Bytes: 189, Text: ","},
			{T: 16_222_111, Bytes: 190, Text: " 2"},
			{T: 19_800_000, Bytes: 210},
		},
		FinishReason: "length",
		Usage:        `{"prompt_tokens":64,"completion_tokens":3,"total_tokens":67}`,
	},
	{
		ID: "c2-in1k-0", Index: 1, Phase: 1, InputTokens: 1000, MaxTokens: 16,
		Scheduled: 25_000_000, Sent: 25_030_100, Headers: 27_900_000, Done: 91_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 50_000_001, Bytes: 230, Reasoning: "Counting", Tokens: 1, ServerT: 49_990_500},
			{T: 52_100_000, Bytes: 224, Reasoning: " up.", Tokens: 2, ServerT: 52_095_000},
			{T: 60_000_000, Bytes: 190, Text: " 1", Tokens: 1, ServerT: 59_998_000},
			{T: 62_000_000, Bytes: 189, Text: ",", Tokens: 1, ServerT: 61_999_900},
			{T: 64_000_007, Bytes: 380, Text: " 2, 3", Tokens: 3, ServerT: 63_990_000},
			{T: 90_999_000, Bytes: 260, Tokens: 0, ServerT: 90_998_000},
		},
		FinishReason: "stop",
		Usage:        `{"prompt_tokens":1000,"completion_tokens":8,"total_tokens":1008,"completion_tokens_details":{"reasoning_tokens":3}}`,
	},
	{
		ID: "c2-in1k-1", Index: 2, Phase: 1, InputTokens: 1000, MaxTokens: 16,
		Scheduled: 25_000_000, Sent: 25_061_000, Headers: 0, Done: 25_400_000, Status: 0,
		Error: &Error{Class: ErrRefused, Message: "dial tcp 127.0.0.1:8080: connect: connection refused"},
	},
	{
		ID: "c2-in1k-2", Index: 3, Phase: 1, InputTokens: 1000, MaxTokens: 16,
		Scheduled: 91_000_000, Sent: 91_020_000, Headers: 93_000_000, Done: 140_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 110_000_000, Bytes: 95, Text: " 1"},
			{T: 111_500_000, Bytes: 94, Text: ","},
			{T: 113_000_000, Bytes: 95, Text: " 2"},
		},
		Error: &Error{Class: ErrReset, Message: "read tcp 127.0.0.1:50112->127.0.0.1:8080: read: connection reset by peer"},
	},
	{
		ID: "c2-in1k-3", Index: 4, Phase: 1, InputTokens: 1000, MaxTokens: 16,
		Scheduled: 140_000_000, Sent: 140_010_000, Headers: 142_000_000, Done: 200_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 150_000_000, Bytes: 120, Text: " 1, 2, 3, 4, 5, 6, 7, 8"},
		},
		FinishReason: "length",
		Timings:      `{"prompt_n":1000,"prompt_ms":40.2,"predicted_n":16,"predicted_ms":49.8,"predicted_per_second":321.3}`,
	},
	{
		ID: "rate5-0", Index: 5, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 300_000_000, Sent: 300_000_900, Headers: 305_000_000, Done: 305_100_000, Status: 400,
		Error: &Error{
			Class:   ErrHTTPStatus,
			Message: "HTTP 400 Bad Request",
			Body:    "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size (40000 > 32768 tokens)\",\"type\":\"exceed_context_size_error\"}}\n",
		},
	},
	{
		ID: "rate5-1", Index: 6, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 481_818_181, Sent: 481_900_000, Headers: 0, Done: 10_481_900_000, Status: 0,
		Error: &Error{Class: ErrTimeoutFirst, Message: "no first byte within 10s", Body: ""},
	},
}

// goldenV12Records are written from format 1.2 on: a response the writer
// clipped, with the client's notes.
var goldenV12Records = []Record{
	{
		ID: "rate5-2", Index: 7, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 500_000_000, Sent: 500_000_700, Headers: 501_000_000, Done: 502_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 501_500_000, Bytes: 4000, Text: "aaaa"},
			{T: 501_600_000, Bytes: 4000},
		},
		FinishReason: "length",
		Clipped:      7900,
		Notes:        "finish reasons after the first: stop; 7900 bytes of text are not kept",
	},
	{
		ID: "rate5-3", Index: 8, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 600_000_000, Sent: 600_000_700, Headers: 0, Done: 600_100_000, Status: 0,
		Error: &Error{Class: ErrRefused, Message: "connection refused"},
		Notes: "no chunks, a note alone",
	},
}

// goldenV13Records are written from format 1.3 on: the server tokenizer's
// counts, with and without the 1.2 fields before them, and one count the
// server could not give.
var goldenV13Records = []Record{
	{
		ID: "rate5-4", Index: 9, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 700_000_000, Sent: 700_000_700, Headers: 701_000_000, Done: 702_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 701_500_000, Bytes: 200, Text: "สวัสดี"},
			{T: 701_600_000, Bytes: 200, Text: "ครับ"},
		},
		FinishReason:       "length",
		Usage:              `{"prompt_tokens":40007,"completion_tokens":2,"total_tokens":40009}`,
		ServerPromptTokens: 39990,
		ServerTextTokens:   2,
	},
	{
		ID: "rate5-5", Index: 10, Phase: 2, InputTokens: 40000, MaxTokens: 16,
		Scheduled: 800_000_000, Sent: 800_000_700, Headers: 801_000_000, Done: 802_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 801_500_000, Bytes: 200, Text: " 1"},
		},
		FinishReason:       "stop",
		Notes:              "a note before the counts",
		ServerPromptTokens: 40000,
		ServerTextTokens:   TokenizeUnavailable,
	},
}

// goldenV14Records are written from format 1.4 on: two turns of a
// conversation (the second with the whole conversation counted as sent),
// and a third turn not sent because the second failed.
var goldenV14Records = []Record{
	{
		ID: "p002-0000", Index: 11, Phase: 2, InputTokens: 800, MaxTokens: 16,
		Scheduled: 900_000_000, Sent: 900_000_700, Headers: 901_000_000, Done: 902_000_000, Status: 200,
		Chunks:       []Chunk{{T: 901_500_000, Bytes: 120, Text: "1, 2"}},
		FinishReason: "length",
		Usage:        `{"prompt_tokens":1100,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}`,
		Session:      "p002-s0000", Turn: 1, SentInputTokens: 1100,
	},
	{
		ID: "p002-0001", Index: 12, Phase: 2, InputTokens: 31, MaxTokens: 16,
		Scheduled: 1_002_000_000, Sent: 1_002_000_500, Headers: 0, Done: 1_002_100_000, Status: 0,
		Error:   &Error{Class: ErrReset, Message: "connection reset by peer"},
		Session: "p002-s0000", Turn: 2, SentInputTokens: 1134,
	},
	{
		ID: "p002-0002", Index: 13, Phase: 2, InputTokens: 31, MaxTokens: 16,
		Error:   &Error{Class: ErrNotSent, Message: "turn 2 of the session failed (reset): the conversation cannot go on without its answer"},
		Session: "p002-s0000", Turn: 3,
	},
	// Kernel receive stamps: each chunk's user-space time beside its
	// stamp, two events of one read sharing both.
	{
		ID: "p003-0000", Index: 14, Phase: 2, InputTokens: 100, MaxTokens: 16,
		Scheduled: 1_100_000_000, Sent: 1_100_000_400, Headers: 1_101_000_000, Done: 1_102_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 1_101_000_000, UserT: 1_101_000_850, Bytes: 120, Text: "1"},
			{T: 1_101_000_000, UserT: 1_101_000_850, Bytes: 120, Text: ","},
			{T: 1_101_400_000, UserT: 1_101_400_020, Bytes: 120, Text: " 2"},
		},
		FinishReason: "length",
		// Computed by the 1.5 reader from the column: delays 850, 850
		// and 20 ns, mean 1720/3 = 573 (integer ns), largest 850.
		UserDelayMean: 573, UserDelayMax: 850,
	},
}

// goldenV15Records are written from format 1.5 on: kernel stamps without
// the chunks' user-space times, the delays' mean and largest in their
// place; and one whose summary was never set (no marker written).
var goldenV15Records = []Record{
	{
		ID: "p003-0001", Index: 15, Phase: 2, InputTokens: 100, MaxTokens: 16,
		Scheduled: 1_200_000_000, Sent: 1_200_000_400, Headers: 1_201_000_000, Done: 1_202_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 1_201_000_000, Bytes: 120, Text: "1"},
			{T: 1_201_400_000, Bytes: 120, Text: ","},
		},
		FinishReason:  "length",
		UserDelayMean: 12_500, UserDelayMax: 20_000,
	},
	{
		ID: "p003-0002", Index: 16, Phase: 2, InputTokens: 100, MaxTokens: 16,
		Scheduled: 1_300_000_000, Sent: 1_300_000_400, Headers: 1_301_000_000, Done: 1_302_000_000, Status: 200,
		Chunks:       []Chunk{{T: 1_301_000_000, Bytes: 120, Text: "1"}},
		FinishReason: "length",
	},
}

// goldenV16Records are written from format 1.6 on: one clock per request
// (the end is the stamp of the read that ended the response, here the
// last chunk's) with chunks read late of both kinds: the first two shared
// one read (the first marked), the fourth's read returned after the
// fifth had arrived; the largest delay is the first's bound, 1_401_000_000
// − 1_400_500_000 (the headers' read) = 500 µs. And a request that kept
// user-space times in a kernel run, with a session and a read-late chunk
// after the 1.4 and 1.5 fields.
var goldenV16Records = []Record{
	{
		ID: "p003-0003", Index: 17, Phase: 2, InputTokens: 100, MaxTokens: 16,
		Scheduled: 1_400_000_000, Sent: 1_400_000_400, Headers: 1_400_500_000, Done: 1_403_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 1_401_000_000, Bytes: 120, Text: "1", ReadLate: true},
			{T: 1_401_000_000, Bytes: 120, Text: ","},
			{T: 1_401_400_000, Bytes: 120, Text: " 2"},
			{T: 1_402_000_000, Bytes: 120, Text: ",", ReadLate: true},
			{T: 1_402_100_000, Bytes: 120, Text: " 3"},
			{T: 1_403_000_000, Bytes: 130},
		},
		FinishReason:  "length",
		UserDelayMean: 40_000, UserDelayMax: 150_000,
		ReadLate: 2, ReadLateMax: 500_000,
	},
	{
		ID: "p004-0000", Index: 18, Phase: 2, InputTokens: 100, MaxTokens: 16,
		Scheduled: 1_500_000_000, Sent: 1_500_000_400, Headers: 1_500_900_000, Done: 1_502_000_000, Status: 200,
		Chunks: []Chunk{
			{T: 1_501_000_000, Bytes: 120, Text: "1"},
			{T: 1_501_000_050, Bytes: 120, Text: ",", ReadLate: true},
			{T: 1_501_900_000, Bytes: 120, Text: " 2"},
		},
		FinishReason: "length",
		Notes:        "user-space timestamps for this request: a read returned no kernel timestamp",
		UserTimes:    true,
		Session:      "p004-s0000", Turn: 1,
		ReadLate: 1, ReadLateMax: 900_000,
	},
}

// goldenV13Scrapes are written from format 1.3 on, each after the record
// of index at: a vLLM /metrics scrape with a label, a histogram bucket and
// special values, a failed scrape, and a watched process.
var goldenV13Scrapes = []struct {
	at int
	s  Scrape
}{
	{0, Scrape{T: 20_000_000, Duration: 1_250_000, Source: SourceMetrics, Target: "http://127.0.0.1:8080/metrics",
		Samples: []Sample{
			{Name: "vllm:num_requests_running", Labels: `model_name="qwen3-0.6b"`, Value: 2},
			{Name: "vllm:num_requests_waiting", Labels: `model_name="qwen3-0.6b"`, Value: 0},
			{Name: "vllm:kv_cache_usage_perc", Labels: `model_name="qwen3-0.6b"`, Value: 0.0625},
			{Name: "vllm:time_to_first_token_seconds_bucket", Labels: `le="+Inf",model_name="qwen3-0.6b"`, Value: 3},
			{Name: "process_start_time_seconds", Value: 1.7649e9},
			{Name: "weird", Labels: `path="a\"b\nc"`, Value: math.Inf(-1)},
		}}},
	{3, Scrape{T: 120_000_000, Duration: 250_000_000, Source: SourceMetrics, Target: "http://127.0.0.1:8080/metrics",
		Error: "no answer within 250ms (the scrape timeout)"}},
	{4, Scrape{T: 200_000_000, Duration: 80_000, Source: SourceProcess, Target: "pid 4242", Dropped: 3,
		Samples: []Sample{
			{Name: "process_resident_memory_bytes", Value: 734_003_200},
			{Name: "process_cpu_seconds_total", Value: 12.5},
			{Name: "process_threads", Value: 17},
		}}},
}

// goldenScrapes are the scrapes a 1.minor golden trace holds, by the index
// of the record each follows.
func goldenScrapes(minor int) map[int][]Scrape {
	m := map[int][]Scrape{}
	if minor < 3 {
		return m
	}
	for _, g := range goldenV13Scrapes {
		m[g.at] = append(m[g.at], g.s)
	}
	return m
}

// goldenRecords are the records a 1.minor golden trace holds.
func goldenRecords(minor int) []Record {
	out := append([]Record{}, goldenV1Records...)
	if minor >= 2 {
		out = append(out, goldenV12Records...)
	}
	if minor >= 3 {
		out = append(out, goldenV13Records...)
	}
	if minor >= 4 {
		out = append(out, goldenV14Records...)
	}
	if minor >= 5 {
		out = append(out, goldenV15Records...)
	}
	if minor >= 6 {
		out = append(out, goldenV16Records...)
	}
	return out
}

// goldenHeader is the header a 1.minor golden trace holds: from 1.6 on,
// with the time fields' sources of a kernel-stamped run.
func goldenHeader(minor int) Header {
	h := goldenV1Header
	if minor >= 6 {
		h.Timestamps = TimestampsKernel
		h.TimeSources = map[string]string{FieldScheduled: TimestampsUser, FieldSent: TimestampsUser,
			FieldHeaders: TimestampsKernel, FieldChunk: TimestampsKernel, FieldDone: TimestampsKernel}
	}
	return h
}

// goldenSent is what the golden writer's progress says was sent: one more
// than written, the request in flight at each flush.
func goldenSent(records int64) int64 { return records + 1 }

func goldenName(major, minor int) string {
	return filepath.Join(goldenDir, fmt.Sprintf("v%d", major), fmt.Sprintf("golden-%d.%d.trace.zst", major, minor))
}

// writeGolden writes the golden records with a flush after each pair, so
// the file is several concatenated zstd frames, like a real run's.
func writeGolden(t *testing.T) []byte {
	var buf bytes.Buffer
	written := int64(0) // the progress function runs under the writer's lock: no Stats
	w, err := NewWriter(&buf, goldenHeader(FormatMinor), WithFlushInterval(0),
		WithProgress(func() (int64, int64) { return 7_000_000_000, goldenSent(written) }))
	if err != nil {
		t.Fatal(err)
	}
	recs := goldenRecords(FormatMinor)
	scrapes := goldenScrapes(FormatMinor)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
		written++
		for k := range scrapes[i] {
			if err := w.WriteScrape(&scrapes[i][k]); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 1 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden decodes every golden trace ever committed and compares it with
// the records it was written from. Run with -update to (re)write the golden
// trace of the version this build writes; older ones are left alone.
func TestGolden(t *testing.T) {
	if *update {
		data := writeGolden(t)
		name := goldenName(FormatMajor, FormatMinor)
		testutil.WriteFile(t, name, data)
		writeFuzzSeeds(t, data)
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "v*", "golden-*.trace.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden traces under %s: run go test -run TestGolden -update", goldenDir)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			r := openTest(t, name)
			major, _ := r.Version()
			var wantH Header
			var want []Record
			var wantScrapes map[int][]Scrape
			switch major {
			case 1:
				_, minor := r.Version()
				wantH, want, wantScrapes = goldenHeader(minor), goldenRecords(minor), goldenScrapes(minor)
			default:
				t.Fatalf("no expected content for format %d.x: add it to golden_test.go", major)
			}
			// The file's own minor version is what the reader reports.
			wantH.Major, wantH.Minor = r.Version()
			if d := cmp.Diff(wantH, r.Header()); d != "" {
				t.Errorf("header (-want +got):\n%s", d)
			}
			var got []Record
			gotScrapes := map[int][]Scrape{}
			r.IncludeScrapes()
			for r.Scan() {
				if s := r.Scrape(); s != nil {
					c := *s
					c.Samples = append([]Sample(nil), s.Samples...)
					gotScrapes[len(got)-1] = append(gotScrapes[len(got)-1], c)
					continue
				}
				got = append(got, copyRecord(r.Record()))
			}
			if r.Err() != nil || r.Truncated() {
				t.Fatalf("Err %v, Truncated %v", r.Err(), r.Truncated())
			}
			if n, first := r.Skipped(); n > 0 {
				t.Errorf("skipped %d entries: %v", n, first)
			}
			if d := cmp.Diff(want, got, cmpRecords); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
			// From 1.6 the last progress entry closes the trace and counts
			// everything; older traces have none.
			p, ok := r.Progress()
			if _, minor := r.Version(); minor >= 6 {
				n := int64(len(want))
				if wantP := (Progress{Seq: p.Seq, T: 7_000_000_000, Sent: goldenSent(n), Records: n, Closed: true}); !ok || p != wantP || p.Seq < 2 {
					t.Errorf("last progress %+v (%v), want %+v after several flushes", p, ok, wantP)
				}
			} else if ok {
				t.Errorf("a 1.%d trace with a progress entry: %+v", minor, p)
			}
			if d := cmp.Diff(wantScrapes, gotScrapes, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("scrapes (-want +got):\n%s", d)
			}
		})
	}
}

// TestScrapesSkippedByDefault: a reader that does not ask for scrapes (every
// caller that knows only records, and so every 1.0–1.2 reader, which skips
// unknown tags the same way) gets exactly the records of a 1.3 trace, and
// learns how many scrapes it passed.
func TestScrapesSkippedByDefault(t *testing.T) {
	r := openTest(t, goldenName(1, 3))
	var got []Record
	for r.Scan() {
		if r.Scrape() != nil {
			t.Fatal("a scrape without IncludeScrapes")
		}
		got = append(got, copyRecord(r.Record()))
	}
	if d := cmp.Diff(goldenRecords(3), got, cmpRecords); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	if n := r.Scrapes(); n != len(goldenV13Scrapes) {
		t.Errorf("Scrapes() = %d, want %d", n, len(goldenV13Scrapes))
	}
}

// TestWriteScrapeBounds: a scrape past MaxScrapeSamples keeps the first
// ones and counts the rest, so no endpoint can make an entry the reader
// refuses.
func TestWriteScrapeBounds(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, goldenV1Header, WithFlushInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	s := Scrape{T: 1, Source: SourceMetrics, Target: "x", Samples: make([]Sample, MaxScrapeSamples+5)}
	for i := range s.Samples {
		s.Samples[i] = Sample{Name: "m", Value: float64(i)}
	}
	if err := w.WriteScrape(&s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Scrapes != 1 || st.Records != 0 {
		t.Errorf("stats %+v, want 1 scrape and 0 records", st)
	}
	r, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r.IncludeScrapes()
	if !r.Scan() || r.Scrape() == nil {
		t.Fatalf("no scrape: %v", r.Err())
	}
	got := r.Scrape()
	if len(got.Samples) != MaxScrapeSamples || got.Dropped != 5 || got.Samples[MaxScrapeSamples-1].Value != MaxScrapeSamples-1 {
		t.Errorf("kept %d samples, dropped %d; want %d and 5", len(got.Samples), got.Dropped, MaxScrapeSamples)
	}
	if len(s.Samples) != MaxScrapeSamples+5 {
		t.Error("WriteScrape changed the caller's scrape")
	}
}

// TestSampleJSON: samples print as JSON whatever their value: NaN and the
// infinities as the text format's strings, names and labels escaped.
func TestSampleJSON(t *testing.T) {
	for _, tc := range []struct {
		s    Sample
		want string
	}{
		{Sample{Name: "a", Value: 1.5}, `{"name":"a","value":1.5}`},
		{Sample{Name: "b", Labels: `le="+Inf"`, Value: math.Inf(1)}, `{"name":"b","labels":"le=\"+Inf\"","value":"+Inf"}`},
		{Sample{Name: "c\x00", Value: math.Inf(-1)}, `{"name":"c\u0000","value":"-Inf"}`},
		{Sample{Name: "d", Value: math.NaN()}, `{"name":"d","value":"NaN"}`},
	} {
		b, err := json.Marshal(tc.s)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s (%v), want %s", tc.s, b, err, tc.want)
		}
	}
}
