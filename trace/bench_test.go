package trace

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/internal/cputime"
)

var sizeCases = []synthConfig{
	{Requests: 64, Tokens: 256, Concurrency: 64, Seed: 1},
	{Requests: 1000, Tokens: 256, Concurrency: 64, Seed: 2},
	{Requests: 1000, Tokens: 256, Concurrency: 64, Seed: 3, IIDGaps: true},
}

func sizeName(c synthConfig) string {
	s := fmt.Sprintf("countup-%dx%d", c.Requests, c.Tokens)
	if c.IIDGaps {
		s += "-iid"
	}
	return s
}

// TestSizeTarget holds the format to its budget: at most 4 bytes per output
// token, text included, on the count-up workload with a flush every second
// of run time, as a real replay writes it.
func TestSizeTarget(t *testing.T) {
	for _, c := range sizeCases {
		recs := synthRun(c)
		data := encodeRun(t, recs, time.Second)
		perTok := float64(len(data)) / float64(outputTokens(recs))
		t.Logf("%s: %d bytes, %.2f bytes/token", sizeName(c), len(data), perTok)
		if perTok > 4 {
			t.Errorf("%s: %.2f bytes per output token, over the 4-byte budget", sizeName(c), perTok)
		}
	}
}

// BenchmarkWrite measures the writer (encode + compress + per-second frames)
// and reports the trace size per output token.
func BenchmarkWrite(b *testing.B) {
	for _, c := range sizeCases {
		recs := synthRun(c)
		toks := outputTokens(recs)
		b.Run(sizeName(c), func(b *testing.B) {
			var size int
			b.ReportAllocs()
			for b.Loop() {
				size = len(encodeRun(b, recs, time.Second))
			}
			b.ReportMetric(float64(size)/float64(toks), "B/tok")
			b.ReportMetric(float64(toks)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

// BenchmarkRead measures decoding a whole trace on one goroutine: the
// analysis's input rate. tok/s counts output tokens (text chunks).
func BenchmarkRead(b *testing.B) {
	c := sizeCases[1]
	recs := synthRun(c)
	data := encodeRun(b, recs, time.Second)
	toks, chunks := outputTokens(recs), 0
	for i := range recs {
		chunks += len(recs[i].Chunks)
	}
	b.Run(sizeName(c), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := cputime.Process()
		for b.Loop() {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for r.Scan() {
				n += len(r.Record().Chunks)
			}
			if r.Err() != nil || n != chunks {
				b.Fatalf("read %d chunks of %d: %v", n, chunks, r.Err())
			}
			r.Close()
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(float64(toks)*float64(b.N)/sec, "tok/s")
		b.ReportMetric(float64(chunks)*float64(b.N)/sec, "chunks/s")
		// On a shared machine wall time depends on the neighbours; CPU time
		// (including the GC's) says what decoding costs.
		if cpu := (cputime.Process() - cpu0).Seconds(); cpu > 0 {
			b.ReportMetric(float64(toks)*float64(b.N)/cpu, "tok/cpu-s")
		}
	})
}

// TestReadAllocs holds the reader to about one allocation per record (the
// string its texts are sliced from), none per chunk: the analysis reads
// millions of chunks a second only if the reader does not feed the GC.
// It compares two trace lengths so that opening the reader (a few dozen
// allocations, once) does not count.
func TestReadAllocs(t *testing.T) {
	allocs := func(records int) float64 {
		recs := synthRun(synthConfig{Requests: records, Tokens: 256, Concurrency: 16, Seed: 4})
		data := encodeRun(t, recs, time.Second)
		return testing.AllocsPerRun(3, func() {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for r.Scan() {
				n++
			}
			if r.Err() != nil || n != len(recs) {
				t.Fatalf("read %d of %d records: %v", n, len(recs), r.Err())
			}
			r.Close()
		})
	}
	small, large := allocs(100), allocs(400)
	perRecord := (large - small) / 300
	t.Logf("%.0f allocations for 100 records, %.0f for 400 (257 chunks each): %.2f per record", small, large, perRecord)
	if perRecord > 2 {
		t.Errorf("%.2f allocations per record, want at most 2 (one, plus slack for the race detector's pools)", perRecord)
	}
}
