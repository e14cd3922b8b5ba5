package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

func TestParseTraceFormats(t *testing.T) {
	for _, tc := range []struct {
		file      string
		format    string
		unit      string
		block     int
		failures  int
		offsetsMs []float64 // from the first request, after sorting
		ins       []int
	}{
		{"mooncake.jsonl", TraceMooncake, "ms", 512, 0, []float64{0, 250, 250, 980, 1730, 4000}, []int{1500, 1100, 600, 30, 2048, 512}},
		{"bailian.jsonl", TraceBailian, "s", 16, 0, []float64{0, 738, 1488, 2613}, []int{130, 200, 96, 100}},
		{"azure.csv", TraceAzure, "datetime", 0, 0, []float64{0, 4314.579, 4319.41, 4819.41, 17053.41, 23319.4101}, []int{374, 396, 879, 91, 1221, 4096}},
		{"burstgpt.csv", TraceBurstGPT, "s", 0, 2, []float64{0, 113000, 113500, 156000}, []int{472, 417, 1360, 2000}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "traces", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			log, err := parseTrace(f)
			if err != nil {
				t.Fatal(err)
			}
			if log.format != tc.format || log.unit != tc.unit || log.blockSize != tc.block || log.failures != tc.failures {
				t.Fatalf("format %s unit %s block %d failures %d; want %s %s %d %d", log.format, log.unit, log.blockSize, log.failures, tc.format, tc.unit, tc.block, tc.failures)
			}
			var offs []float64
			var ins []int
			for _, r := range log.rows {
				offs = append(offs, float64(r.t-log.rows[0].t)/1e6)
				ins = append(ins, r.in)
			}
			if !slices.Equal(offs, tc.offsetsMs) || !slices.Equal(ins, tc.ins) {
				t.Fatalf("offsets %v ms, inputs %v; want %v, %v", offs, ins, tc.offsetsMs, tc.ins)
			}
		})
	}
}

func TestTraceBuildSharesHashBlocks(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, Shape: ShapeCompletion, Schedule: "trace:testdata/traces/mooncake.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	h := wl.Header
	if h.Params.Trace != "mooncake.jsonl" || h.Schedule.Spec != "trace:mooncake.jsonl" || h.Params.BlockTokens != 512 || !strings.HasPrefix(h.Params.TraceDigest, "sha256:") {
		t.Fatalf("params %+v", h.Params)
	}
	if len(h.Phases) != 1 || h.Phases[0].Kind != KindTrace || h.Phases[0].Requests != 6 {
		t.Fatalf("phases %+v", h.Phases)
	}
	if !strings.Contains(h.Params.Note, "raised") || !strings.Contains(h.Params.Note, "0 output tokens") {
		t.Errorf("note %q should mention the raised prompt and the 0-token output", h.Params.Note)
	}
	for _, r := range wl.Requests {
		if got := tok.Count(r.Prompt); got != r.InputTokens {
			t.Fatalf("%s: %d tokens, want %d", r.ID, got, r.InputTokens)
		}
	}
	r := wl.Requests
	if r[1].Offset != 250e6 || r[4].Offset != 1730e6 || r[4].MaxTokens != 300 || r[2].MaxTokens != 1 {
		t.Fatalf("offsets/outputs wrong: %+v", r)
	}
	kit, _ := newPromptKit(tok, 0, DefaultSaltWords, prefixMode{kind: "unique"})
	lead := kit.fixedTokens() - kit.tailTokens
	ids := func(i int) []int { return tok.Encode(r[i].Prompt) }
	// rows 0 [0 1 2] and 1 [0 1 3]: blocks 0 and 1 shared, then differ
	if n := commonPrefix(ids(0), ids(1)); n < lead+1024 || n >= lead+1024+512 {
		t.Errorf("hash ids [0 1 2] and [0 1 3] share %d tokens, want %d…%d", n, lead+1024, lead+1024+511)
	}
	// rows 0 [0 1 2] (1500 tokens, block 2 cut short) and 4 [0 1 2 6]
	part := 1500 - kit.fixedTokens() - 1024
	if n := commonPrefix(ids(0), ids(4)); n < lead+1024+part-1 {
		t.Errorf("hash ids [0 1 2] and [0 1 2 6] share %d tokens, want ≥ %d", n, lead+1024+part-1)
	}
	// rows 0 and 2 ([4 5]) share nothing past the salt
	if n := commonPrefix(ids(0), ids(2)); n != lead {
		t.Errorf("unrelated hash ids share %d tokens, want %d", n, lead)
	}
}

func TestTraceWindowAndScale(t *testing.T) {
	tok := loadTok(t, "o200k_base")
	wl, err := Build(BuildConfig{Tok: tok, Schedule: "trace:testdata/traces/burstgpt.csv", Window: "100:150", TimeScale: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, r := range wl.Requests {
		offs = append(offs, r.Offset)
	}
	if !slices.Equal(offs, []int64{6_500_000_000, 6_750_000_000}) {
		t.Fatalf("offsets %v", offs)
	}
	if !strings.Contains(wl.Header.Params.Note, "2 failed request(s)") {
		t.Errorf("note %q should count the skipped failures", wl.Header.Params.Note)
	}
	if _, err := Build(BuildConfig{Tok: tok, Schedule: "trace:testdata/traces/burstgpt.csv", Window: "500:600"}); err == nil || !strings.Contains(err.Error(), "holds no requests") {
		t.Fatalf("an empty window should be refused, got %v", err)
	}
	for _, w := range []string{"abc", "5:2", "1"} {
		if _, err := Build(BuildConfig{Tok: tok, Schedule: "trace:testdata/traces/burstgpt.csv", Window: w}); err == nil || !strings.Contains(err.Error(), "BuildConfig.Window") {
			t.Errorf("--window %s: want an error, got %v", w, err)
		}
	}
}

func TestAzureTimestampPrecision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"2023-11-16 18:15:46", 1700158546_000000000},
		{"2023-11-16 18:15:46.6805900", 1700158546_680590000},
		{"2023-11-16 18:15:46.5", 1700158546_500000000},
		{"2023-11-16T18:15:46.123456789", 1700158546_123456789},
	} {
		got, err := azureTime(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("azureTime(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := azureTime("yesterday"); err == nil {
		t.Error("azureTime accepted garbage")
	}
}

func TestParseTraceErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty"},
		{"unknown csv", "a,b,c\n1,2,3\n", "unknown request log format"},
		{"bad json", "{\"timestamp\": 1, \"input_length\": \n", "line 1"},
		{"missing field", `{"timestamp": 1, "input_length": 5}` + "\n", "needs timestamp"},
		{"negative", `{"timestamp": 1, "input_length": -5, "output_length": 1}` + "\n", "negative"},
		{"bad count", "Timestamp,Request tokens,Response tokens\n1,abc,3\n", "whole numbers"},
		{"bad time", "TIMESTAMP,ContextTokens,GeneratedTokens\nnoon,1,2\n", "timestamp"},
		{"short row", "Timestamp,Request tokens,Response tokens\n1,2\n", "fields"},
		{"only failures", "Timestamp,Request tokens,Response tokens\n1,2,0\n", "no usable requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTrace(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func FuzzParseTrace(f *testing.F) {
	files, _ := filepath.Glob("testdata/traces/*")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"timestamp": 1e400, "input_length": 1, "output_length": 1}`))
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n-1,2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		log, err := parseTrace(bytes.NewReader(data))
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		if len(log.rows) == 0 {
			t.Fatal("a parsed log without rows")
		}
		for i, r := range log.rows {
			if r.in < 0 || r.out < 0 || r.t < 0 || (i > 0 && r.t < log.rows[i-1].t) {
				t.Fatalf("bad row %d: %+v", i, r)
			}
		}
	})
}
