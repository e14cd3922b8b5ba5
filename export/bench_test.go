package export

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
)

// writeBig writes a trace of reqs requests × toks one-token chunks (1 ms
// apart plus up to 50 µs of jitter, the server's count on each chunk), the
// shape of a long sweep.
func writeBig(tb testing.TB, path string, reqs, toks int) {
	h := trace.Header{Label: "big", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m",
		StartWall: "2026-01-01T00:00:00Z",
		Phases:    []trace.Phase{{Index: 0, Name: "burst-c64", Kind: "burst", Concurrency: 64, InputTokens: 100, MaxTokens: toks, Requests: reqs}}}
	w, err := trace.Create(path, h)
	if err != nil {
		tb.Fatal(err)
	}
	rec := trace.Record{Status: 200, FinishReason: "length", InputTokens: 100, MaxTokens: toks,
		Usage: fmt.Sprintf(`{"completion_tokens":%d,"prompt_tokens":100}`, toks)}
	rec.Chunks = make([]trace.Chunk, toks)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < reqs; i++ {
		rec.ID, rec.Index = fmt.Sprintf("r%d", i), i
		rec.Sent = int64(i/64) * 2e9
		for k := range rec.Chunks {
			// A real server's chunks are not exactly 1 ms apart: a few
			// microseconds of jitter, as measured ones have, keep the
			// records from being byte-identical repeats (which compress
			// 1000× and which the trace writer takes for a zstd bomb).
			jitter := int64(rng.IntN(50_000))
			rec.Chunks[k] = trace.Chunk{T: rec.Sent + 50e6 + int64(k)*1e6 + jitter, Bytes: 60, Text: "1", Tokens: 1}
		}
		rec.Done = rec.Chunks[toks-1].T + 1e6
		if err := w.Write(&rec); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkExportParquet: 1,000 requests × 1,000 tokens (1 M tokens) to
// Parquet, reported as tokens/s (docs/PERFORMANCE.md).
func BenchmarkExportParquet(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.trace.zst")
	const reqs, toks = 1000, 1000
	writeBig(b, path, reqs, toks)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Export(Options{Dir: filepath.Join(dir, "out"), Format: "parquet", Force: true}, analyze.Input{Path: path}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(reqs*toks)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
	// Per CPU second (user+sys of the process, every goroutine): the figure
	// a loaded machine does not distort.
	b.ReportMetric(float64(reqs*toks)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "tok/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBigTraceFixture writes the 10 M-token trace (10,000 requests ×
// 1,000 tokens) that docs/PERFORMANCE.md times `report` and `export` on, to
// $BIG_TRACE; it skips without it. It is a fixture generator, not a timing.
func BenchmarkBigTraceFixture(b *testing.B) {
	path := os.Getenv("BIG_TRACE")
	if path == "" {
		b.Skip("set BIG_TRACE=/path/big.trace.zst to write the 10 M-token trace")
	}
	for i := 0; i < b.N; i++ {
		writeBig(b, path, 10000, 1000)
	}
}
