package servermetrics

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkParse is the client's CPU for one scrape's parse: the vLLM
// fixture (16 series), and a body of 2,000 series with labels, the size
// of a vLLM /metrics with many LoRA adapters or engines
// (docs/PERFORMANCE.md).
func BenchmarkParse(b *testing.B) {
	vllm := readFixture(b, "vllm.metrics")
	var big bytes.Buffer
	big.WriteString("# TYPE vllm:request_success_total counter\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&big, "vllm:request_success_total{engine=\"%d\",finished_reason=\"stop\",model_name=\"Qwen/Qwen3-0.6B\"} %d\n", i, i*7)
	}
	for _, c := range []struct {
		name string
		body []byte
	}{{"vllm-16-series", vllm}, {"2000-series", big.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for i := 0; i < b.N; i++ {
				if _, err := Parse(c.body, "text/plain; version=0.0.4"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
