package analyze

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
)

// countUpRecord fills rec with a count-up response of n one-token chunks
// the way a server streams it under o200k ("1" "," " " "2" …), 4 ms apart.
func countUpRecord(rec *trace.Record, i, n, phase int, sent int64) {
	rec.ID = "r" + strconv.Itoa(i)
	rec.Phase = phase
	rec.InputTokens, rec.MaxTokens = 800, n
	rec.Scheduled, rec.Sent = sent, sent+20_000
	rec.Usage = `{"completion_tokens":` + strconv.Itoa(n) + `,"prompt_tokens":800}`
	rec.Chunks = rec.Chunks[:0]
	num := 1
	t := sent + 50*msNs
	for k := 0; k < n; k++ {
		var text string
		switch k % 3 {
		case 0:
			text = strconv.Itoa(num)
			num++
		case 1:
			text = ","
		default:
			text = " "
		}
		rec.Chunks = append(rec.Chunks, trace.Chunk{T: t, Bytes: 120, Text: text})
		t += 4 * msNs
	}
	rec.Done = t
	rec.Status = 200
	rec.FinishReason = "length"
}

func benchHeader() trace.Header {
	h := header("bench")
	for i, c := range []int{1, 4, 8, 16, 32} {
		h.Phases = append(h.Phases, phase(i, c, 800, 256, 0))
	}
	h.Reference = ""
	return h
}

// BenchmarkAnalyze feeds records already in memory (the analysis alone)
// and reports analysed output tokens per second.
func BenchmarkAnalyze(b *testing.B) {
	const n = 256
	recs := make([]trace.Record, 64)
	for i := range recs {
		countUpRecord(&recs[i], i, n, i%5, int64(i)*10*msNs)
	}
	a, _ := New(Options{})
	acc := a.Trace("bench", "", benchHeader())
	acc.Add(&recs[0]) // load the tokenizer outside the timing
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		acc.Add(&recs[i%len(recs)])
	}
	b.StopTimer()
	res := a.Result()
	res.Groups([]string{KeyConcurrency})
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkAnalyzeTraceFile reads a compressed trace (decoder included)
// and analyses it.
func BenchmarkAnalyzeTraceFile(b *testing.B) {
	const n, requests = 256, 2000
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, benchHeader())
	if err != nil {
		b.Fatal(err)
	}
	var rec trace.Record
	for i := 0; i < requests; i++ {
		countUpRecord(&rec, i, n, i%5, int64(i)*10*msNs)
		if err := w.Write(&rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := trace.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		a, _ := New(Options{})
		if err := a.AddReader("", "", r); err != nil {
			b.Fatal(err)
		}
		a.Result().Groups([]string{KeyConcurrency})
	}
	b.ReportMetric(float64(b.N)*n*requests/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkAnalyze10M streams ten million output tokens (39,063 requests
// of 256) through one analyzer and reports the peak heap in use, sampled
// every 1,000 requests: the bound the issue sets is 300 MB.
func BenchmarkAnalyze10M(b *testing.B) {
	const n, total = 256, 10_000_000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		peak := uint64(0)
		a, _ := New(Options{})
		acc := a.Trace("big", "", benchHeader())
		var rec trace.Record
		start := time.Now()
		for j := 0; j*n < total; j++ {
			countUpRecord(&rec, j, n, j%5, int64(j)*msNs)
			acc.Add(&rec)
			if j%1000 == 0 {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
				}
			}
		}
		elapsed := time.Since(start)
		doc := NewDocument(a.Result(), []string{KeyConcurrency})
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak {
			peak = ms.HeapInuse
		}
		b.ReportMetric(float64(peak-base)/1e6, "peak-heap-MB")
		b.ReportMetric(total/elapsed.Seconds(), "tok/s")
		if len(doc.Groups) != 5 {
			b.Fatal(fmt.Sprint("groups ", len(doc.Groups)))
		}
	}
}
