package endpoint

import (
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestFreshStateAllocs: a response read with a state the pool did not
// have (every response of a first wave wider than the pool) allocates a
// bounded number of objects, not a growing slice's dozen per response:
// the chunks, the texts' spans and their bytes are made room for from
// max_tokens once.
func TestFreshStateAllocs(t *testing.T) {
	events := vllmResponse(256, false)
	r := &eventsReader{events: events}
	var clock int64
	now := func() int64 { clock++; return clock }
	var chunks int
	allocs := testing.AllocsPerRun(20, func() {
		r.i = 0
		rec := &trace.Record{MaxTokens: 256}
		st := new(state)
		if err := st.read(&openAIChat.reader, r, now, rec); err != nil {
			t.Fatal(err)
		}
		st.texts(rec)
		chunks = len(rec.Chunks)
	})
	if chunks != 259 { // the role, 256 tokens, the finish, the usage
		t.Fatalf("%d chunks, want 259", chunks)
	}
	// The parser's buffer, the chunks, the spans, the text and its string,
	// and a few of the state's own scratch buffers: 9 today, against 24
	// when the spans and the text grew from nothing.
	if allocs > 12 {
		t.Errorf("%.0f allocations to read a 256-token response with a fresh state; want at most 12", allocs)
	}
}
