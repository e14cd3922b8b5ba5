package workload

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden workload files")

// goldenConfig is the command behind testdata/golden-v1.workload.zst.
var goldenConfig = BuildConfig{
	Tokenizer: "o200k_base", Shape: ShapeCompletion, InputTokens: []int{64, 100},
	MaxTokens: 16, Schedule: "rate:2.5", Arrival: "poisson", Requests: 3, Seed: 11,
}

const (
	goldenV1       = "testdata/golden-v1.workload.zst"
	goldenV1Digest = "testdata/golden-v1.digest"
)

// TestGoldenV1 proves that a file written by format 1.0 still reads, that
// its digest is stable, and that today's builder still makes the same
// content from the same command.
func TestGoldenV1(t *testing.T) {
	wl := openGolden(t, goldenV1, goldenConfig)
	if *update {
		testutil.WriteFile(t, goldenV1Digest, []byte(Digest(wl)+"\n"))
	}
	want, err := os.ReadFile(goldenV1Digest)
	if err != nil {
		t.Fatal(err)
	}
	if got := Digest(wl); got != strings.TrimSpace(string(want)) {
		t.Fatalf("golden v1 digest %s, want %s", got, want)
	}
	if wl.Header.Major != 1 || len(wl.Requests) != 6 || wl.Header.Requests != 6 {
		t.Fatalf("golden v1 header %+v with %d requests", wl.Header, len(wl.Requests))
	}
	fresh := rebuildsGolden(t, wl, goldenConfig, "workload")
	// Byte identity of the compressed file, on whatever machine runs this.
	// A zstd library upgrade may legitimately change the bytes (not the
	// content or digest); then rerun with -update and say so in the commit.
	golden, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	if buf := encoded(t, fresh); !bytes.Equal(buf.Bytes(), golden) {
		t.Fatalf("a fresh build compresses to %d bytes that differ from the golden file's %d", buf.Len(), len(golden))
	}
}

func TestRoundTrip(t *testing.T) {
	for _, cfg := range []BuildConfig{
		{InputTokens: []int{70}, Schedule: "burst:1,3", Repeats: 2},
		{InputTokens: []int{70}, Schedule: "closed:2", Requests: 5, Shape: ShapeCompletion, SaltWords: NoSaltWords},
		{Schedule: "trace:testdata/traces/azure.csv", Window: "1:20"},
	} {
		wl := mustBuild(t, cfg)
		got, err := Decode(encoded(t, wl))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wl, got); diff != "" {
			t.Fatalf("round trip changed the workload:\n%s", diff)
		}
		if Digest(got) != Digest(wl) {
			t.Fatal("digest changed in a round trip")
		}
	}
}

func TestCreateLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	if err := Create(filepath.Join(dir, "missing", "x.workload.zst"), &Workload{}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("want a missing-folder error, got %v", err)
	}
}

// compress wraps raw content the way Encode does.
func compress(t testing.TB, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf, encoderOptions()...)
	io.WriteString(zw, content)
	zw.Close()
	return buf.Bytes()
}

func TestDecodeErrors(t *testing.T) {
	good, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	wl, _ := Open(goldenV1)
	writeContent(&raw, wl)
	lines := strings.SplitAfter(raw.String(), "\n")
	header := lines[1]

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "it is empty"},
		{"plain text", []byte("hello, world\n"), "not zstd-compressed"},
		{"other zstd", compress(t, "id,value\n1,2\n"), "does not start with the llmreplay-workload magic"},
		{"newer major", compress(t, "llmreplay-workload 2.0\n{}\n"), "written by a newer llmreplay (workload format 2.0); this build reads 1.x: upgrade llmreplay"},
		{"older major", compress(t, "llmreplay-workload 0.9\n{}\n"), "this build reads 1.x"},
		{"bad version", compress(t, "llmreplay-workload one\n"), "bad version"},
		{"truncated zstd", good[:len(good)*2/3], "truncated"},
		{"missing requests", compress(t, strings.Join(lines[:4], "")), "truncated workload file: 2 of 6 requests"},
		{"cut line", compress(t, strings.Join(lines[:4], "")+lines[4][:10]), "truncated"},
		{"extra line", compress(t, raw.String()+"{}\n"), "more lines than"},
		{"bad header", compress(t, lines[0]+"{nope\n"), "header"},
		{"bad request", compress(t, lines[0]+header+"[1,2]\n"), "request 1"},
		{"header mismatch", compress(t, "llmreplay-workload 1.3\n"+header), "version line says"},
		{"corrupt frame", append(append([]byte{}, good[:20]...), bytes.Repeat([]byte{0xff}, 200)...), "workload file"},
		// Fields edited by hand beyond their meaning.
		{"salt words past the span", compress(t, strings.Replace(raw.String(), `"words":4}`, `"words":2000000000}`, 1)), "2000000000 salt words in a 31-byte salt span"},
		{"huge burst", compress(t, lines[0]+hugeBurst+lines[2]), "concurrency 100000000"},
		{"burst wider than its requests", compress(t, lines[0]+strings.Replace(hugeBurst, "100000000", "7", 1)+lines[2]), "a burst's concurrency is at most its requests"},
		{"huge max_tokens", compress(t, strings.Replace(raw.String(), `"max_tokens":16,"temperature"`, `"max_tokens":9000000000000000000,"temperature"`, 1)), "output tokens"},
		{"negative rate", compress(t, strings.Replace(raw.String(), `"rate":2.5,"requests"`, `"rate":-1,"requests"`, 1)), "rate -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

// A newer minor version with fields this build does not know still reads.
func TestDecodeSkipsUnknownFields(t *testing.T) {
	var raw bytes.Buffer
	wl, _ := Open(goldenV1)
	writeContent(&raw, wl)
	s := strings.Replace(raw.String(), "llmreplay-workload 1.0\n", "llmreplay-workload 1.7\n", 1)
	s = strings.Replace(s, `"major":1,"minor":0,`, `"major":1,"minor":7,"future":{"x":1},`, 1)
	s = strings.Replace(s, `{"id":"p000-0000",`, `{"id":"p000-0000","new_field":[1,2,3],`, 1)
	got, err := Decode(bytes.NewReader(compress(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Minor != 7 || got.Requests[0].ID != "p000-0000" {
		t.Fatalf("read %+v", got.Header)
	}
}

// A small file that inflates to gigabytes is refused without the memory.
// The line limit is lowered to 4 MiB here so the test stays fast; the
// mechanism is the same at 64 MiB.
func TestDecodeRefusesZstdBomb(t *testing.T) {
	defer func(old int) { lineLimit = old }(lineLimit)
	lineLimit = 4 << 20
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	io.WriteString(zw, "llmreplay-workload 1.0\n")
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	for i := 0; i < 8; i++ { // 8 MiB without a newline
		zw.Write(chunk)
	}
	zw.Close()
	if buf.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes; want it small", buf.Len())
	}
	_, err := Decode(bytes.NewReader(buf.Bytes()))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("want a line-too-long error, got %v", err)
	}
}

func TestDecodeRefusesHugeWindow(t *testing.T) {
	// A valid workload's first frame, its header patched to ask for a
	// 1 GiB window: the decoder must refuse it for the window (a bomb
	// guard), before decoding anything. Encoding with a real 1 GiB window
	// would cost seconds and allocate it; patching costs nothing.
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf, zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(false))
	good, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := zstd.NewReader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(zw, plain)
	plain.Close()
	zw.Close()
	b := buf.Bytes()
	if _, err := Decode(bytes.NewReader(b)); err != nil {
		t.Fatalf("the re-compressed golden workload does not decode: %v", err)
	}
	// Frame header: 4-byte magic, the descriptor byte, then (not single
	// segment) the window descriptor: exponent<<3 | mantissa, window =
	// 2^(10+exponent). Exponent 20 is 1 GiB.
	if b[4]&0x20 != 0 {
		t.Fatal("the encoder wrote a single-segment frame: no window descriptor to patch")
	}
	b[5] = 20 << 3
	_, err = Decode(bytes.NewReader(b))
	if err == nil || !strings.Contains(err.Error(), "window") {
		t.Fatalf("a 1 GiB window: %v, want it refused for its window", err)
	}
	t.Log(err)
}

// hugeBurst is a header whose one phase is a burst of concurrency 10^8
// (with the golden file's first request following it).
const hugeBurst = `{"format":"llmreplay-workload","major":1,"minor":0,"requests":1,"phases":[{"index":0,"name":"b","kind":"burst","concurrency":100000000,"requests":1}]}` + "\n"

func FuzzDecode(f *testing.F) {
	good, err := os.ReadFile(goldenV1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(compress(f, "llmreplay-workload 2.0\n{}\n"))
	f.Add(compress(f, "llmreplay-workload 1.0\n{\"format\":\"llmreplay-workload\",\"major\":1,\"requests\":1,\"phases\":[{}]}\n{\"id\":\"x\",\"prompt\":\"ab\",\"salt\":{\"start\":1,\"end\":9}}\n"))
	f.Add([]byte("not a workload"))
	// A hand edit past the fields' bounds.
	f.Add(compress(f, "llmreplay-workload 1.0\n"+hugeBurst+`{"id":"x","phase":0,"prompt":"a b c d","salt":{"start":0,"end":4,"words":2000000000}}`+"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wl, err := Decode(bytes.NewReader(data))
		if err != nil {
			testutil.OneLine(t, err)
			return
		}
		// Whatever decodes must survive salting and re-encoding.
		for _, r := range wl.Requests {
			r.WithSalt([]string{"river"})
		}
		var buf bytes.Buffer
		if err := Encode(&buf, wl); err != nil {
			t.Fatalf("decoded workload does not re-encode: %v", err)
		}
		Digest(wl)
	})
}

// TestGoldenV1_1 reads the committed 1.1 workload: built with a
// tokenizer.json, it records the tokenizer's path (tokenizer_path), which a
// 1.0 file never carries. -update rewrites it from the repo's Qwen3 copy
// (the path recorded is the machine's that wrote it: the test checks the
// field, not the path).
func TestGoldenV1_1(t *testing.T) {
	const name = "testdata/golden-v1.1.workload.zst"
	wl := openGolden(t, name, BuildConfig{Tokenizer: "tokenize/testdata/qwen3/tokenizer.json.zst", Shape: ShapeCompletion, InputTokens: []int{100}, MaxTokens: 8, Schedule: "burst:2", Repeats: 1, Seed: 3})
	h := wl.Header
	if h.Major != 1 || h.Minor != 1 || h.Tokenizer != "hf:qwen3" || !strings.HasSuffix(h.TokenizerPath, "qwen3/tokenizer.json.zst") || len(wl.Requests) != 2 {
		t.Fatalf("golden 1.1: %d.%d tokenizer %s at %q, %d requests", h.Major, h.Minor, h.Tokenizer, h.TokenizerPath, len(wl.Requests))
	}
}
