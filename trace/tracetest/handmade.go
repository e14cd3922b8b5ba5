package tracetest

import "github.com/llmreplay/llmreplay/trace"

// The pieces of the hand-made traces the metric tests work out by hand,
// shared by every package that checks figures on them.

// Chunk is a content chunk at tMs milliseconds after the run's start, of
// tokens tokens, with the bytes a streamed event of it would take.
func Chunk(tMs float64, text string, tokens int) trace.Chunk {
	return trace.Chunk{T: int64(tMs * 1e6), Bytes: 40 + len(text), Text: text, Tokens: tokens}
}

// Phase is burst phase i ("p" and its digit) of repeat requests at conc
// streams.
func Phase(i, conc, input, max, repeat int) trace.Phase {
	return trace.Phase{Index: i, Name: "p" + string(rune('0'+i)), Kind: "burst", Concurrency: conc, InputTokens: input, MaxTokens: max, Repeat: repeat}
}

// Header is a trace header of format 1 labelled label, of one workload and
// model, with phases.
func Header(label string, phases ...trace.Phase) trace.Header {
	return trace.Header{Format: trace.FormatName, Major: 1, Label: label, Tokenizer: "o200k_base",
		WorkloadDigest: "sha256:w1", Model: "m1", Phases: phases}
}

// AddAll gives every record of recs, in order, to acc (an analyzer's
// accumulator of one trace).
func AddAll(acc interface{ Add(*trace.Record) }, recs []trace.Record) {
	for i := range recs {
		acc.Add(&recs[i])
	}
}
