package trace

import "testing"

// TestStats counts the golden records by hand: 7 records, 1 warm-up; 3 ok
// (warmup-0, c2-in1k-0, c2-in1k-3), failed: refused, reset, http-status,
// timeout-first; chunks 4+6+0+3+1+0+0 = 14, with text 3+3+3+1 = 10 (the
// reset one's three included), with reasoning 2.
func TestStats(t *testing.T) {
	s := NewStats()
	for i := range goldenV1Records {
		s.Add(&goldenV1Records[i])
	}
	if s.Records != 7 || s.Warmup != 1 || s.OK != 3 || len(s.Failed) != 4 || s.Failed[ErrReset] != 1 {
		t.Errorf("records %d warmup %d ok %d failed %v", s.Records, s.Warmup, s.OK, s.Failed)
	}
	if s.Chunks != 14 || s.TextChunks != 10 || s.ReasoningChunks != 2 || s.ReasoningBytes != 12 {
		t.Errorf("chunks %d text %d reasoning %d (%d B)", s.Chunks, s.TextChunks, s.ReasoningChunks, s.ReasoningBytes)
	}
	if s.PerPhase[1] != 4 || s.First != 41_250 || s.Last != 10_481_900_000 {
		t.Errorf("per phase %v first %d last %d", s.PerPhase, s.First, s.Last)
	}
}
