package workload

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkBuild64x32k is the bar: 64 requests of 32,000 tokens in
// under 5 s on a 2-core machine, every count verified by the tokenizer.
func BenchmarkBuild64x32k(b *testing.B) {
	tok := loadTok(b, "o200k_base")
	tok.Digest() // computed once per process; not part of a build's cost
	cfg := BuildConfig{Tok: tok, InputTokens: []int{32000}, Schedule: "burst:64", Repeats: 1}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		wl, err := Build(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if len(wl.Requests) != 64 {
			b.Fatalf("%d requests", len(wl.Requests))
		}
	}
	el := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(el, "s/build")
	b.ReportMetric(64*32000/el, "tok/s")
}

// BenchmarkDecode64x32k reads back the same workload from its file.
func BenchmarkDecode64x32k(b *testing.B) {
	wl, err := Build(BuildConfig{InputTokens: []int{32000}, Schedule: "burst:64", Repeats: 1})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytesBuffer
	if err := Encode(&buf, wl); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf.b)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Decode(buf.reader()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf.b)), "file-bytes")
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bytesBuffer) reader() *bytes.Reader       { return bytes.NewReader(w.b) }
