package live

import (
	"math"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/trace"
)

// TestSamples: a round's records become samples by hand-worked figures.
// Record 1 (sent 1,000 ms, content at 1,200, 1,300 and 1,400 ms, done
// 1,500 ms, 3 tokens): TTFT 200 ms, E2E 500 ms, TPOT (1,400 − 1,200)/2 =
// 100 ms under the default definitions' last-token rule, or (500 − 200)/2
// = 150 ms under the end-of-response one, so the test takes TPOT from
// analyze's own row instead of fixing a definition here. Against goodput
// bounds ttft=250ms it is good; against ttft=150ms not. The warm-up record
// is left out; a failed one is a sample that is neither OK nor good.
func TestSamples(t *testing.T) {
	const ms = int64(time.Millisecond)
	h := trace.Header{Format: trace.FormatName, Major: 1, Tokenizer: "o200k_base", Label: "t",
		Phases: []trace.Phase{{Index: 0, Name: "p", Kind: "closed", Concurrency: 1}}}
	ok := &trace.Record{ID: "p000-0001", Index: 1, Sent: 1000 * ms, Headers: 1100 * ms, Done: 1500 * ms, Status: 200,
		Chunks:       []trace.Chunk{{T: 1200 * ms, Bytes: 40, Text: "1", Tokens: 1}, {T: 1300 * ms, Bytes: 40, Text: "2", Tokens: 1}, {T: 1400 * ms, Bytes: 40, Text: "3", Tokens: 1}},
		FinishReason: "length"}
	warm := &trace.Record{ID: "p000-0000", Index: 0, Warmup: true, Sent: 0, Done: 900 * ms, Status: 200}
	failed := &trace.Record{ID: "p000-0002", Index: 2, Sent: 1000 * ms, Done: 1010 * ms, Error: &trace.Error{Class: trace.ErrorClass("http-status"), Message: "500"}}
	recs := []*trace.Record{warm, ok, failed}
	for _, tc := range []struct {
		bound time.Duration
		good  bool
	}{{250 * time.Millisecond, true}, {150 * time.Millisecond, false}} {
		s, err := Samples(h, recs, analyze.SLO{TTFT: tc.bound}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 2 {
			t.Fatalf("%d samples, want 2 (warm-up left out)", len(s))
		}
		a := s[0]
		if !a.OK || math.Abs(a.Values["ttft"]-200) > 1e-9 || math.Abs(a.Values["e2e"]-500) > 1e-9 || a.Good != tc.good {
			t.Errorf("bound %v: sample %+v", tc.bound, a)
		}
		if a.Start != time.Second || a.End != 1500*time.Millisecond {
			t.Errorf("start %v end %v", a.Start, a.End)
		}
		if s[1].OK || s[1].Good {
			t.Errorf("failed request sampled as %+v", s[1])
		}
	}
	// Time scale 0.1: the goodput bound 250 ms becomes 25 ms, which 200 ms misses.
	s, _ := Samples(h, recs, analyze.SLO{TTFT: 250 * time.Millisecond}, 0.1)
	if s[0].Good {
		t.Error("the goodput bound was not scaled")
	}
}
