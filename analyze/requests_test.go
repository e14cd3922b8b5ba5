package analyze

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// The per-request rows of handTrace (metrics_test.go), worked out by hand,
// plus one request that failed with HTTP 400.
func TestRequestRowsByHand(t *testing.T) {
	tt := handTrace()
	tt.records = append(tt.records, trace.Record{ID: "r3", Index: 3, Phase: 1, InputTokens: 100, MaxTokens: 4,
		Scheduled: 500 * msNs, Sent: 500 * msNs, Done: 503 * msNs, Status: 400,
		Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 400 Bad Request", Body: `{"error":{"message":"too long"}}`}})
	l, err := NewRequestLister("", tt.h, "")
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	want := []RequestRow{
		// r0: sent 1 ms (scheduled 0: 1 ms late); ttft = 101 − 1 = 100 ms;
		// e2e = 141 − 1 = 140 ms; tokens 4 from usage, input 110 from
		// usage; per-stream = (4 − 1) / (131 − 101 ms) = 100 tok/s;
		// tpot = (140 − 100) / (4 − 1) = 13.333 ms.
		{Label: "A", ID: "r0", Phase: "p0", PhaseIndex: 0, Concurrency: 1, OK: true, Status: 200,
			SentS: 0.001, LatenessS: 0.001, TTFTS: f(0.1), E2ES: f(0.14), TPOTS: f(0.04 / 3),
			InputTokens: 110, OutputTokens: 4, OutputTokensSource: SourceUsage, PerStreamTPS: f(100), Chunks: 3, FinishReason: "length"},
		// r1: sent = scheduled = 200 ms; ttft = 300 − 200 = 100 ms; e2e
		// 150 ms; tokens 1+1+2 = 4 from chunk counts; input 100 (the
		// workload's); per-stream = 3 / (340 − 300 ms) = 75; tpot = 50/3 ms.
		{Label: "A", ID: "r1", Phase: "p1", PhaseIndex: 1, Concurrency: 2, OK: true, Status: 200,
			SentS: 0.2, LatenessS: 0, TTFTS: f(0.1), E2ES: f(0.15), TPOTS: f(0.05 / 3),
			InputTokens: 100, OutputTokens: 4, OutputTokensSource: SourceChunkTokens, PerStreamTPS: f(75), Chunks: 3, FinishReason: "length"},
		// r2: sent 202 ms, 2 ms late; ttft = 402 − 202 = 200 ms; e2e 230
		// ms; tokenizer 1+1+2 = 4; per-stream = 3 / (422 − 402 ms) = 150;
		// tpot = (230 − 200) / 3 = 10 ms.
		{Label: "A", ID: "r2", Phase: "p1", PhaseIndex: 1, Concurrency: 2, OK: true, Status: 200,
			SentS: 0.202, LatenessS: 0.002, TTFTS: f(0.2), E2ES: f(0.23), TPOTS: f(0.01),
			InputTokens: 100, OutputTokens: 4, OutputTokensSource: SourceTokenizer, PerStreamTPS: f(150), Chunks: 3, FinishReason: "length"},
		// r3: failed after 3 ms: no TTFT, no speed; e2e = 3 ms (the time
		// to the failure); the server's message quoted.
		{Label: "A", ID: "r3", Index: 3, Phase: "p1", PhaseIndex: 1, Concurrency: 2, OK: false, Status: 400,
			SentS: 0.5, E2ES: f(0.003), InputTokens: 100, OutputTokens: 0, OutputTokensSource: SourceTokenizer,
			ErrorClass: "http-status", ErrorMessage: "HTTP 400 Bad Request: too long"},
	}
	for i := range tt.records {
		got := l.Row(&tt.records[i])
		w := want[i]
		for _, c := range []struct {
			name string
			g, w *float64
		}{{"ttft_s", got.TTFTS, w.TTFTS}, {"e2e_s", got.E2ES, w.E2ES}, {"tpot_s", got.TPOTS, w.TPOTS}, {"per_stream_tps", got.PerStreamTPS, w.PerStreamTPS}} {
			if (c.g == nil) != (c.w == nil) || c.g != nil && !near(*c.g, *c.w) {
				t.Errorf("%s %s = %v, want %v", w.ID, c.name, deref(c.g), deref(c.w))
			}
		}
		got.TTFTS, got.E2ES, got.TPOTS, got.PerStreamTPS = nil, nil, nil, nil
		w.TTFTS, w.E2ES, w.TPOTS, w.PerStreamTPS = nil, nil, nil, nil
		if !near(got.SentS, w.SentS) || !near(got.LatenessS, w.LatenessS) {
			t.Errorf("%s sent %v late %v, want %v %v", w.ID, got.SentS, got.LatenessS, w.SentS, w.LatenessS)
		}
		got.SentS, got.LatenessS, w.SentS, w.LatenessS = 0, 0, 0, 0
		got.FirstNs, got.LastNs = 0, 0 // not printed; export's test holds them
		if got != w {
			t.Errorf("row %d:\ngot  %+v\nwant %+v", i, got, w)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRequestRowsUnderAPeerSet: trace cat --requests --definitions vllm
// gives each row the vllm set's own reading (conformance_vllm_test.go's
// roleStream): ttft 40 ms (the role-only event), e2e 80 (the last chunk),
// tpot (80 − 40)/3 ms, per-stream 75 tok/s; its median over the rows is
// the table's.
func TestRequestRowsUnderAPeerSet(t *testing.T) {
	tt := roleStream()
	l, err := NewRequestLister("", tt.h, "vllm")
	if err != nil {
		t.Fatal(err)
	}
	row := l.Row(&tt.records[0])
	if row.TTFTS == nil || !near(*row.TTFTS, 0.040) || row.E2ES == nil || !near(*row.E2ES, 0.080) ||
		row.TPOTS == nil || !near(*row.TPOTS, 0.040/3) || row.PerStreamTPS == nil || *row.PerStreamTPS != 75 || row.OutputTokens != 4 {
		t.Errorf("row %+v", row)
	}
}
