package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// countUpTokens is the count-up answer as a tokenizer like cl100k splits it:
// " 1", ",", " 2", ",", … one token per streamed chunk.
func countUpTokens(n int) []string {
	out := make([]string, 0, n)
	for i := 1; len(out) < n; i++ {
		out = append(out, " "+strconv.Itoa(i))
		if len(out) < n {
			out = append(out, ",")
		}
	}
	return out
}

// synthConfig shapes a synthetic count-up run.
type synthConfig struct {
	Requests    int
	Tokens      int // output tokens (text chunks) per request
	Concurrency int
	// IIDGaps draws every inter-token gap uniformly from 2–20 ms with
	// nanosecond resolution: the worst case for compression. Otherwise each
	// request has its own step time in 2–20 ms (the server's decode step at
	// its batch size) plus per-chunk jitter of a few hundred µs and rare
	// stalls, which is what real streams look like.
	IIDGaps bool
	Seed    uint64
}

// synthRun returns count-up records in completion order, as the replay
// engine hands them to the writer.
func synthRun(cfg synthConfig) []Record {
	rng := rand.New(rand.NewPCG(cfg.Seed, 99))
	toks := countUpTokens(cfg.Tokens)
	const framing = 187 // bytes of an OpenAI chat SSE event around its text
	recs := make([]Record, cfg.Requests)
	free := make([]int64, cfg.Concurrency) // when each stream slot frees up
	for i := range recs {
		slot := slices.Index(free, slices.Min(free))
		sched := free[slot]
		r := Record{
			ID:          fmt.Sprintf("c%d-%d", cfg.Concurrency, i),
			Index:       i,
			Phase:       0,
			InputTokens: 1000,
			MaxTokens:   cfg.Tokens,
			Scheduled:   sched,
			Status:      200,
		}
		r.Sent = sched + 20_000 + rng.Int64N(80_000)
		r.Headers = r.Sent + 2_000_000 + rng.Int64N(3_000_000)
		t := r.Headers + 30_000_000 + rng.Int64N(100_000_000) // prefill
		step := 2_000_000 + rng.Int64N(18_000_000)
		r.Chunks = make([]Chunk, 0, len(toks)+1)
		for k, tok := range toks {
			if k > 0 {
				if cfg.IIDGaps {
					t += 2_000_000 + rng.Int64N(18_000_000)
				} else {
					gap := step + int64(rng.NormFloat64()*300_000)
					if rng.IntN(100) == 0 {
						gap += rng.Int64N(50_000_000)
					}
					t += max(gap, 50_000)
				}
			}
			r.Chunks = append(r.Chunks, Chunk{T: t, Bytes: framing + len(tok), Text: tok})
		}
		t += 20_000 + rng.Int64N(200_000)
		r.Chunks = append(r.Chunks, Chunk{T: t, Bytes: framing + 6})
		r.FinishReason = "length"
		r.Usage = fmt.Sprintf(`{"prompt_tokens":1000,"completion_tokens":%d,"total_tokens":%d}`, cfg.Tokens, 1000+cfg.Tokens)
		r.Done = t + 10_000 + rng.Int64N(50_000)
		free[slot] = r.Done
		recs[i] = r
	}
	slices.SortStableFunc(recs, func(a, b Record) int { return int(a.Done - b.Done) })
	return recs
}

var synthHeader = Header{
	ToolVersion:    "0.1.0",
	WorkloadDigest: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
	Tokenizer:      "cl100k_base",
	Shape:          "chat",
	Phases:         []Phase{{Index: 0, Name: "c64", Kind: "closed", Concurrency: 64, InputTokens: 1000, MaxTokens: 256, Requests: 64}},
	Reference:      " 1, 2, 3, 4, 5",
	URL:            "http://127.0.0.1:8080/v1/chat/completions",
	API:            "openai-chat",
	Model:          "sim",
	Label:          "synthetic",
	StartWall:      "2026-12-02T13:00:00.000000000Z",
	Host:           Host{OS: "linux", Arch: "amd64", CPU: "test", Cores: 2, GoVersion: "go1.26"},
}

// encodeRun writes recs the way a replay does: a flush every second of run
// time (by each record's Done), so the compressed size includes the cost of
// starting a new zstd frame every second.
func encodeRun(tb testing.TB, recs []Record, flushEvery time.Duration) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, synthHeader, WithFlushInterval(0))
	if err != nil {
		tb.Fatal(err)
	}
	next := int64(flushEvery)
	for i := range recs {
		if flushEvery > 0 && recs[i].Done >= next {
			if err := w.Flush(); err != nil {
				tb.Fatal(err)
			}
			for next <= recs[i].Done {
				next += int64(flushEvery)
			}
		}
		if err := w.Write(&recs[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func outputTokens(recs []Record) int {
	n := 0
	for i := range recs {
		for _, c := range recs[i].Chunks {
			if c.Text != "" {
				n++
			}
		}
	}
	return n
}
