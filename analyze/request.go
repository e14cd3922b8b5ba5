package analyze

import (
	"math"

	"github.com/llmreplay/llmreplay/trace"
)

// Where a request's output token count came from.
const (
	SourceUsage       = "usage"        // the server's usage / timings object
	SourceChunkTokens = "chunk-tokens" // the server's per-chunk counts, summed
	// SourceServerTokenizer: the server's own tokenizer's count of the
	// received text (Record.ServerTextTokens, its /tokenize): the model's
	// vocabulary, where the trace's tokenizer may be another.
	SourceServerTokenizer = "server-tokenizer"
	SourceTokenizer       = "tokenizer" // the received text, counted per chunk
	SourceChunks          = "chunks"    // one per content chunk: no tokenizer
)

// facts is one request reduced to what the metrics need. It is rebuilt for
// every record in reused buffers, so Add allocates nothing per chunk.
type facts struct {
	rec *trace.Record
	ok  bool

	first, last int64 // arrival of the first and last chunk carrying text or reasoning
	ttft, e2e   int64 // ns; ttft is 0 when no content arrived
	content     int   // chunks carrying text or reasoning
	// firstReasoning and firstAnswer are the first chunks carrying
	// reasoning and answer text (0: none); reasoningChunkTokens is the
	// reasoning's tokens counted chunk by chunk (a reasoning-only chunk's
	// server count, else the tokenizer's count of its reasoning).
	firstReasoning, firstAnswer int64
	reasoningChunkTokens        int

	serverTokens    int // usage completion count, −1 if absent
	promptTokens    int // usage prompt count, −1 if absent
	chunkTokens     int // Σ chunk.Tokens when every content chunk has one, else −1
	tokenizerTokens int // Σ per-chunk tokenizer counts (chunk count in fallback)
	// serverText and serverPrompt are the server's own tokenizer's counts
	// of the received text and of the prompt (Record.ServerTextTokens,
	// ServerPromptTokens), −1 when unknown or past a plausible bound.
	serverText, serverPrompt int
	// textBytes is the bytes of text and reasoning received, those the
	// trace clipped included: no response holds more tokens than bytes.
	textBytes int64
	// implausibleUsage: a server count was negative or beyond any plausible
	// bound and was not used.
	implausibleUsage bool

	tokens int    // the count the definition set uses
	source string // and where it came from
	input  int    // input tokens: usage prompt count, else the workload's

	t []int64 // content chunk arrival times
	k []int   // tokens per content chunk (server count, else tokenizer count)
	// out[i] says ITL leaves out the gap into content chunk i: read late
	// (clientlate.go).
	out []bool

	srv        serverTimers // the server's own figures (timers())
	timersRead bool

	bytes     int // wire bytes of all chunks
	lastShare float64
	text      []byte // received text (not reasoning), for the count-up check

	// gaps are the content chunks' gaps in ms (gapsMs), gaps[i−1] the
	// one before chunk i: itl and itl_chunk both read them.
	gaps     []float64
	gapsDone bool

	// parsed remembers what the server's usage and timings objects said,
	// kept across records (serverObjects).
	parsed serverObjects

	// pv is the request read by a peer definition set (peers.go); unused
	// by llmreplay and seed.
	pv peerView
}

// arrivalRate is how fast the tokens after the first content chunk arrived:
// (tokens − first chunk's tokens) / (last − first chunk arrival), in tok/s.
// bunched says they came faster than any engine decodes one stream
// (maxPlausibleTPS), or all at one instant: chunks flushed together, not
// streamed. One content chunk has no pattern (rate 0, not bunched; the
// last-chunk share judges it).
func (f *facts) arrivalRate() (rate float64, bunched bool) {
	if f.content < 2 || f.tokens <= 0 {
		return 0, false
	}
	after := 0
	for _, k := range f.k[1:] {
		after += k
	}
	span := max(float64(f.last-f.first)/1e9, 1e-6)
	rate = float64(after) / span
	return rate, rate > maxPlausibleTPS
}

func (f *facts) reset(r *trace.Record) {
	*f = facts{rec: r, t: f.t[:0], k: f.k[:0], out: f.out[:0], text: f.text[:0], gaps: f.gaps[:0], parsed: f.parsed, pv: f.pv}
}

// build fills f from r.
func (f *facts) build(r *trace.Record, c *counter, d *DefinitionSet) {
	f.reset(r)
	f.ok = r.OK()
	obj := f.parsed.read(r.Usage, r.Timings)
	f.serverTokens, f.promptTokens = obj.completion, obj.prompt
	f.srv, f.timersRead = obj.timers, true
	// Server numbers are not trusted as counts past a plausible bound: a
	// per-chunk count of 9e18 overflowed the sums and crashed the
	// statistics. They stay in the trace; the analysis falls back to the
	// text and says so (usage_implausible).
	limit := plausibleTokens(r.MaxTokens)
	if f.serverTokens > limit || f.serverTokens < -1 {
		f.serverTokens, f.implausibleUsage = -1, true
	}
	if f.promptTokens > maxPlausiblePrompt || f.promptTokens < -1 {
		f.promptTokens, f.implausibleUsage = -1, true
	}
	f.serverText, f.serverPrompt = -1, -1
	if n := r.ServerTextTokens; n > 0 && n <= limit {
		f.serverText = n
	}
	if n := r.ServerPromptTokens; n > 0 && n <= maxPlausiblePrompt {
		f.serverPrompt = n
	}
	f.textBytes = r.Clipped
	allChunkCounts := true
	sumChunk := 0
	var prevContent *trace.Chunk
	for i := range r.Chunks {
		ch := &r.Chunks[i]
		f.bytes += ch.Bytes
		if ch.Text == "" && ch.Reasoning == "" {
			continue
		}
		nr := c.count(ch.Reasoning)
		n := c.count(ch.Text) + nr
		f.tokenizerTokens += n
		f.textBytes += int64(len(ch.Text) + len(ch.Reasoning))
		k := n
		if ch.Tokens < 0 || ch.Tokens > limit || sumChunk > limit-ch.Tokens {
			// Negative, absurd, or a sum past the bound: checked before
			// adding, so the sum cannot overflow.
			f.implausibleUsage = true
			allChunkCounts = false
		} else if ch.Tokens > 0 {
			k = ch.Tokens
			sumChunk += ch.Tokens
		} else {
			allChunkCounts = false
		}
		if k < 1 {
			k = 1
		}
		if ch.Reasoning != "" {
			if f.firstReasoning == 0 {
				f.firstReasoning = ch.T
			}
			if ch.Text == "" {
				nr = k // a reasoning-only chunk: all its tokens are reasoning
			}
			f.reasoningChunkTokens += nr
		}
		if ch.Text != "" && f.firstAnswer == 0 {
			f.firstAnswer = ch.T
		}
		if f.content == 0 {
			f.first = ch.T
		}
		f.out = append(f.out, f.content > 0 && leftOut(prevContent, ch))
		prevContent = ch
		f.last = ch.T
		f.content++
		f.t = append(f.t, ch.T)
		f.k = append(f.k, k)
		f.text = append(f.text, ch.Text...)
	}
	f.chunkTokens = -1
	if allChunkCounts && f.content > 0 {
		f.chunkTokens = sumChunk
	}
	if f.content > 0 {
		f.ttft = f.first - r.Sent
	}
	if r.Done > 0 {
		f.e2e = r.Done - r.Sent
	}
	f.tokens, f.source = f.chooseTokens(c, d)
	if f.content > 0 && f.tokens > 0 {
		sum := 0
		for _, k := range f.k {
			sum += k
		}
		f.lastShare = float64(f.k[len(f.k)-1]) / float64(sum)
	}
	f.input = r.InputTokens
	if f.promptTokens > 0 {
		f.input = f.promptTokens
	}
	if d.peer {
		f.buildPeer(r, c, d)
	}
}

func (f *facts) chooseTokens(c *counter, d *DefinitionSet) (int, string) {
	tok := func() (int, string) {
		if c.tok == nil {
			return f.tokenizerTokens, SourceChunks
		}
		return f.tokenizerTokens, SourceTokenizer
	}
	if f.serverTokens >= 0 {
		return f.serverTokens, SourceUsage
	}
	if f.chunkTokens >= 0 {
		return f.chunkTokens, SourceChunkTokens
	}
	if f.serverText > 0 {
		return f.serverText, SourceServerTokenizer
	}
	return tok()
}

// Bounds past which a server's token count is not a count. A response
// holds at most a generous multiple of the max_tokens it was asked for
// (servers that ignore max_tokens are still bounded by the client's own
// overlong limit); a prompt at most 2^24 tokens, 16× the workload limit.
const (
	plausibleTokensFactor = 64
	maxPlausibleTokens    = 1 << 26
	maxPlausiblePrompt    = 1 << 24
)

// plausibleTokens is the largest output token count believed for a
// request that asked for maxTokens.
func plausibleTokens(maxTokens int) int {
	if maxTokens <= 0 || maxTokens > maxPlausibleTokens/plausibleTokensFactor {
		return maxPlausibleTokens
	}
	return max(maxTokens*plausibleTokensFactor, 1<<16)
}

// ms converts nanoseconds to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// perStream is one stream's generation speed in tok/s under the
// definition set's reading of "after the first token".
func (f *facts) perStream(d *DefinitionSet) (float64, bool) {
	switch d.stream {
	case streamSpan:
		if f.tokens < 2 || f.last <= f.first {
			return 0, false
		}
		return float64(f.tokens-1) / (float64(f.last-f.first) / 1e9), true
	case streamDecode:
		dt := f.e2e - f.ttft
		if f.tokens < 2 || dt <= 0 {
			return 0, false
		}
		return float64(f.tokens-1) / (float64(dt) / 1e9), true
	default: // streamE2E
		if f.tokens < 1 || f.e2e <= 0 {
			return 0, false
		}
		return float64(f.tokens) / (float64(f.e2e) / 1e9), true
	}
}

func (f *facts) tpotMs(d *DefinitionSet) (float64, bool) {
	switch d.tpot {
	case tpotPerToken:
		if f.tokens < 1 || f.content == 0 {
			return 0, false
		}
		return ms(f.last-f.first) / float64(f.tokens), true
	default:
		if f.tokens < 2 || f.e2e <= 0 || f.content == 0 {
			return 0, false
		}
		return ms(f.e2e-f.ttft) / float64(f.tokens-1), true
	}
}

// gapsMs returns the gaps between consecutive content chunks in ms,
// computed once per record.
func (f *facts) gapsMs() []float64 {
	if !f.gapsDone {
		for i := 1; i < len(f.t); i++ {
			g := ms(f.t[i] - f.t[i-1])
			if f.out[i] {
				g = math.NaN() // no sample (Dist.AddN skips NaN)
			}
			f.gaps = append(f.gaps, g)
		}
		f.gapsDone = true
	}
	return f.gaps
}

// itl emits the inter-token latency samples (ms) of one request.
func (f *facts) itl(d *DefinitionSet, out *Dist) {
	switch d.itl {
	case itlPerChunk:
		for _, g := range f.gapsMs() {
			out.AddN(g, 1)
		}
	case itlRequestMean:
		if f.tokens >= 2 && f.e2e > 0 && f.content > 0 {
			out.AddN(ms(f.e2e-f.ttft)/float64(f.tokens-1), 1)
		}
	case itlRequestSpan:
		if f.tokens >= 2 && f.content > 0 {
			out.AddN(ms(f.last-f.first)/float64(f.tokens-1), 1)
		}
	default: // itlPerToken: the first chunk's tokens arrive with the TTFT and have no gap
		for i, g := range f.gapsMs() {
			k := f.k[i+1]
			if k != 1 { // g/1 is g: the division is skipped, not the sample changed
				g /= float64(k)
			}
			out.AddN(g, k)
		}
	}
}

// reasoningTokens is the response's reasoning tokens: the server's own
// count when its usage has one (never above its output count), else the
// reasoning chunks' tokens.
func (f *facts) reasoningTokens() int {
	if r := f.srv.reasoning; r >= 0 && f.source == SourceUsage {
		return min(r, f.tokens)
	}
	return min(f.reasoningChunkTokens, max(f.tokens, 0))
}
