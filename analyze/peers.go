package analyze

import (
	"math"
	"sort"

	"github.com/llmreplay/llmreplay/trace"
)

// Token count sources only the peer sets use.
const (
	// SourceMaxTokens: the max_tokens the request asked for, which
	// SGLang's clients and GuideLLM 0.3 report when no usage came.
	SourceMaxTokens = "max_tokens"
	// SourceEvents: one per text event, GuideLLM 0.8's fallback
	// (token_iterations).
	SourceEvents = "events"
)

// peerView is one request read the way a peer set's tool reads it
// (definitions.go says which events it counts, where it ends, how it
// counts tokens). It is rebuilt for every record in reused buffers.
type peerView struct {
	has         bool  // a counted event arrived
	first, last int64 // the first and the last counted event
	end         int64 // the request's end for the set; 0 when unknown
	iters       int   // counted events
	tokens      int   // the set's output tokens; −1 when it has none
	source      string
	input       int
	// gaps are the gaps between counted events in ms and gapK the tokens
	// each following event carried (1 unless the set splits events).
	gaps []float64
	gapK []int
	// text and reasoning join the answer text and the reasoning, for the
	// sets that tokenize them whole.
	text, reasoning []byte
}

// buildPeer reads r into f.pv by d's rules; f.build has run.
func (f *facts) buildPeer(r *trace.Record, c *counter, d *DefinitionSet) {
	pv := &f.pv
	*pv = peerView{gaps: pv.gaps[:0], gapK: pv.gapK[:0], text: pv.text[:0], reasoning: pv.reasoning[:0], tokens: -1}
	var prev int64
	add := func(t int64, k int) {
		if pv.iters == 0 {
			pv.first, pv.has = t, true
		} else {
			pv.gaps = append(pv.gaps, ms(t-prev))
			pv.gapK = append(pv.gapK, k)
		}
		prev, pv.last = t, t
		pv.iters++
	}
	// SGLang's native counts are the growth of meta_info.completion_tokens
	// (Chunk.Tokens); a record without any (another API) is split by the
	// tokenizer's count of each text instead.
	native, seen := false, false
	if d.events == evSGLangNative {
		for i := range r.Chunks {
			if r.Chunks[i].Tokens > 0 {
				native = true
				break
			}
		}
	}
	for i := range r.Chunks {
		ch := &r.Chunks[i]
		content := ch.Text != "" || ch.Reasoning != ""
		switch d.events {
		case evContent:
			if content {
				add(ch.T, 1)
			}
		case evText:
			if ch.Text != "" {
				add(ch.T, 1)
			}
		case evVLLM:
			// Every event with choices is a chunk to vLLM's client: the
			// content-less ones before the first content (a chat
			// stream's role-only event) count; after it the trace cannot
			// tell a finish-only event (choices) from a usage-only one (no
			// choices), and counts neither.
			if content || !seen {
				add(ch.T, 1)
			}
			seen = seen || content
		case evSGLangNative:
			switch {
			case pv.iters == 0:
				if ch.Text != "" {
					add(ch.T, 1)
				}
			case native:
				if ch.Tokens > 0 {
					add(ch.T, ch.Tokens)
				}
			case ch.Text != "":
				add(ch.T, max(1, c.count(ch.Text)))
			}
		}
		if d.tokens != tokGuide08 {
			pv.text = append(pv.text, ch.Text...)
			pv.reasoning = append(pv.reasoning, ch.Reasoning...)
		}
	}
	switch d.end {
	case endDone:
		pv.end = r.Done
	case endLastEvent:
		pv.end = pv.last
		if !pv.has && len(r.Chunks) > 0 {
			pv.end = r.Chunks[len(r.Chunks)-1].T // AIPerf's responses[-1]
		}
	}
	pv.tokens, pv.source = f.peerTokens(r, c, d)
	pv.input = f.input
	if d.workloadInput {
		pv.input = r.InputTokens
	}
}

// textCount is the tokenizer's count of joined text (not cached: a whole
// answer is counted once), the content chunks' count without a tokenizer.
func (f *facts) textCount(c *counter, s []byte) (int, string) {
	if c.tok == nil {
		return f.tokenizerTokens, SourceChunks
	}
	if len(s) == 0 {
		return 0, SourceTokenizer
	}
	return c.tok.Count(string(s)), SourceTokenizer
}

func (f *facts) peerTokens(r *trace.Record, c *counter, d *DefinitionSet) (int, string) {
	pv := &f.pv
	switch d.tokens {
	case tokVLLM:
		if f.serverTokens > 0 {
			return f.serverTokens, SourceUsage
		}
		return f.textCount(c, pv.text)
	case tokSGLang, tokUsageElseMax:
		// SGLang keeps any usage count it read, 0 included; GuideLLM's
		// `response_output_tokens or request_output_tokens` skips a 0.
		if f.serverTokens > 0 || (d.tokens == tokSGLang && f.serverTokens == 0) {
			return f.serverTokens, SourceUsage
		}
		if r.MaxTokens > 0 {
			return r.MaxTokens, SourceMaxTokens
		}
		return f.textCount(c, pv.text)
	case tokGuide08:
		if f.serverTokens >= 0 {
			return f.serverTokens, SourceUsage
		}
		if pv.iters > 0 {
			return pv.iters, SourceEvents
		}
		return -1, ""
	case tokTokenizer:
		if c.tok == nil {
			return f.tokenizerTokens, SourceChunks
		}
		a, _ := f.textCount(c, pv.text)
		b, _ := f.textCount(c, pv.reasoning)
		return a + b, SourceTokenizer
	}
	return f.tokens, f.source
}

// peerOK reports whether the set counts the request as a success.
func (f *facts) peerOK(d *DefinitionSet) bool {
	return f.ok && (f.pv.has || d.noFirst != nfFail)
}

// peerTTFT is the set's TTFT in ms.
func (f *facts) peerTTFT(d *DefinitionSet) (float64, bool) {
	if f.pv.has {
		return ms(f.pv.first - f.rec.Sent), true
	}
	return 0, d.noFirst == nfZero
}

// peerE2E is the set's request latency in ms.
func (f *facts) peerE2E() (float64, bool) {
	if f.pv.end <= 0 {
		return 0, false
	}
	return ms(f.pv.end - f.rec.Sent), true
}

// peerTPOT is the set's TPOT in ms and its weight.
func (f *facts) peerTPOT(d *DefinitionSet) (float64, int, bool) {
	pv := &f.pv
	n := pv.tokens
	switch d.tpot {
	case tpotPerToken:
		if n < 1 || !pv.has {
			return 0, 0, false
		}
		return ms(pv.last-pv.first) / float64(n), n, true
	case tpotFromStart:
		if n < 1 {
			return 0, 0, false
		}
		last := pv.end
		if pv.has {
			last = pv.last
		}
		return ms(last-f.rec.Sent) / float64(n), n, true
	}
	ttft, ok1 := f.peerTTFT(d)
	e2e, ok2 := f.peerE2E()
	if n < 2 || !ok1 || !ok2 {
		return 0, 0, false
	}
	return (e2e - ttft) / float64(n-1), 1, true
}

// peerITL adds the set's ITL samples of one request to out.
func (f *facts) peerITL(d *DefinitionSet, out *Dist) {
	pv := &f.pv
	n := pv.tokens
	switch d.itl {
	case itlPerChunk:
		for _, g := range pv.gaps {
			out.AddN(g, 1)
		}
	case itlPerToken:
		for i, g := range pv.gaps {
			k := pv.gapK[i]
			out.AddN(g/float64(k), k)
		}
	case itlRequestMean:
		ttft, ok1 := f.peerTTFT(d)
		e2e, ok2 := f.peerE2E()
		if n >= 2 && ok1 && ok2 && pv.has {
			out.AddN((e2e-ttft)/float64(n-1), 1)
		}
	case itlRequestSpan:
		if n < 2 {
			return
		}
		v := 0.0 // GuideLLM 0.8: `inter_token_latency_ms or 0.0`
		if pv.has {
			v = ms(pv.last-pv.first) / float64(n-1)
		} else if d.pct != pctGuide08 {
			return
		}
		out.AddWeighted(v, n-1)
	}
}

// peerStream is the set's per-stream speed in tok/s.
func (f *facts) peerStream(d *DefinitionSet) (float64, bool) {
	n := f.pv.tokens
	e2e, ok := f.peerE2E()
	if !ok {
		return 0, false
	}
	if d.stream == streamE2E {
		if n < 1 || e2e <= 0 {
			return 0, false
		}
		return float64(n) / (e2e / 1e3), true
	}
	ttft, ok := f.peerTTFT(d)
	if n < 2 || !ok || e2e-ttft <= 0 {
		return 0, false
	}
	return float64(n-1) / ((e2e - ttft) / 1e3), true
}

// peerMeetsSLO applies the goodput bounds to the set's own TTFT, TPOT and
// latency; a request with fewer than two tokens has TPOT 0 (vLLM's
// all_tpots).
func (a *Analyzer) peerMeetsSLO(f *facts) bool {
	d := &a.defs
	ttft, ok := f.peerTTFT(d)
	if !ok {
		return false
	}
	if a.slo.TTFT > 0 && ttft > ms(int64(a.slo.TTFT)) {
		return false
	}
	if a.slo.TPOT > 0 {
		if v, _, ok := f.peerTPOT(d); ok && v > ms(int64(a.slo.TPOT)) {
			return false
		}
	}
	if e2e, ok := f.peerE2E(); a.slo.E2E > 0 && ok && e2e > ms(int64(a.slo.E2E)) {
		return false
	}
	return true
}

// peerRun is what a run accumulates for a peer set.
type peerRun struct {
	ok, good       int
	out, in        int64
	firstS, lastE  int64 // successful requests' first send and last end
	reqs           []glReq
	okEnds, okSend []float64
}

// glReq is one successful request as GuideLLM's rate distributions take
// it, times in seconds on the run clock.
type glReq struct {
	s, d, f, last float64 // send, end, first text event, last text event
	has           bool
	n, p, iters   int
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// observePeer adds one successful request to the run's peer tallies.
func (r *run) observePeer(a *Analyzer, f *facts, primary bool) {
	d := &a.defs
	if !f.peerOK(d) {
		return
	}
	p := &r.peer
	pv := &f.pv
	if p.ok == 0 || f.rec.Sent < p.firstS {
		p.firstS = f.rec.Sent
	}
	if pv.end > p.lastE {
		p.lastE = pv.end
	}
	p.ok++
	if pv.tokens > 0 {
		p.out += int64(pv.tokens)
	}
	p.in += int64(pv.input)
	if a.peerMeetsSLO(f) {
		p.good++
	}
	if primary && (d.window == windowGuide03 || d.window == windowGuide08) {
		q := glReq{s: secs(f.rec.Sent), d: secs(f.rec.Done), has: pv.has, n: max(pv.tokens, 0), p: pv.input, iters: pv.iters}
		q.f, q.last = q.s, q.d
		if pv.has {
			q.f, q.last = secs(pv.first), secs(pv.last)
		}
		p.reqs = append(p.reqs, q)
	}
}

// peerWindow returns the set's throughput of tok (out or out+in) and its
// requests per second of n (successful or good) for a run.
func (r *run) peerRate(d *DefinitionSet, what string) (float64, bool) {
	p := &r.peer
	var w float64
	switch d.window {
	case windowDone:
		w = float64(r.lastDone-r.firstSend) / 1e9
		if r.firstSend == math.MaxInt64 {
			w = 0
		}
	case windowOK:
		w = float64(p.lastE-p.firstS) / 1e9
	case windowGuide03:
		switch what {
		case "out", "total":
			return guide03Tokens(p.reqs, what == "total")
		case "requests":
			return guide03Requests(p.reqs, len(p.reqs))
		case "good":
			v, ok := guide03Requests(p.reqs, len(p.reqs))
			if !ok || p.ok == 0 {
				return 0, false
			}
			return v * float64(p.good) / float64(p.ok), true
		}
	case windowGuide08:
		switch what {
		case "out", "total":
			return guide08Tokens(p.reqs, what == "total")
		case "requests", "good":
			if r.firstSend == math.MaxInt64 {
				return 0, false
			}
			v, ok := guide08Requests(p.reqs, secs(r.firstSend), secs(r.lastDone))
			if !ok {
				return 0, false
			}
			if what == "good" && p.ok > 0 {
				v *= float64(p.good) / float64(p.ok)
			}
			return v, true
		}
	}
	if w <= 0 {
		return 0, false
	}
	switch what {
	case "out":
		return float64(p.out) / w, true
	case "total":
		return float64(p.out+p.in) / w, true
	case "requests":
		return float64(p.ok) / w, true
	}
	return float64(p.good) / w, true
}

// guideEps is GuideLLM 0.3's epsilon for merging close events (1 µs), and
// guideThreshold GuideLLM 0.8's (0.1 ms).
const (
	guideEps       = 1e-6
	guideThreshold = 1e-4
)

// event is one instant of a rate distribution and what happened then.
type event struct{ t, n float64 }

// guide03Tokens is the mean of GuideLLM 0.3's output_tokens_per_second
// (or tokens_per_second) distribution over successful requests with
// output tokens (DistributionSummary.from_iterable_request_times): each
// request's first event counts 1 (the prompt's tokens for total) at its
// first token, and the rest are spread evenly up to its end; events
// within 1 µs merge into the earliest; the mean is the events' count
// over the time from the first send to the last merged event, whose own
// count is left out (no interval follows it).
func guide03Tokens(reqs []glReq, total bool) (float64, bool) {
	type spread struct {
		f, lat      float64
		first, rest int
	}
	var ss []spread
	gs, ge := math.Inf(1), math.Inf(-1)
	sum := 0.0
	for _, q := range reqs {
		if q.n <= 0 {
			continue
		}
		first, count := 1, q.n
		if total {
			first, count = q.p, q.p+q.n
		}
		sp := spread{f: q.f, first: first}
		if count > 1 {
			sp.lat, sp.rest = (q.d-q.f)/float64(count-1), count-1
		}
		ss = append(ss, sp)
		gs, ge = math.Min(gs, q.s), math.Max(ge, q.d)
		sum += float64(first + sp.rest)
	}
	if len(ss) == 0 {
		return 0, false
	}
	tail := func(cut float64) []event {
		m := map[float64]float64{}
		for _, sp := range ss {
			for i := sp.rest; i >= 1; i-- {
				t := sp.f + float64(i)*sp.lat
				if t < cut {
					break
				}
				m[t]++
			}
			if sp.f >= cut {
				m[sp.f] += float64(sp.first)
			}
		}
		for _, t := range []float64{gs, ge} {
			if t >= cut {
				m[t] += 0
			}
		}
		return sortedEvents(m)
	}
	start, last := lastGroup03(tail, gs, ge)
	if start <= gs {
		return 0, true
	}
	return (sum - last) / (start - gs), true
}

// guide03Requests is the mean of GuideLLM 0.3's requests_per_second
// distribution (DistributionSummary.from_request_times, "rate"): one event
// at the first send counting 1, one at each successful end, merged and
// the last left out as above; n is how many requests it holds.
func guide03Requests(reqs []glReq, n int) (float64, bool) {
	if n == 0 {
		return 0, false
	}
	gs, ge := math.Inf(1), math.Inf(-1)
	for _, q := range reqs {
		gs, ge = math.Min(gs, q.s), math.Max(ge, q.d)
	}
	tail := func(cut float64) []event {
		var es []event
		if gs >= cut {
			es = append(es, event{gs, 1})
		}
		for _, q := range reqs {
			if q.d >= cut {
				es = append(es, event{q.d, 1})
			}
		}
		sort.SliceStable(es, func(i, j int) bool { return es[i].t < es[j].t })
		return es
	}
	start, last := lastGroup03(tail, gs, ge)
	if start <= gs {
		return 0, true
	}
	return (float64(1+n) - last) / (start - gs), true
}

// lastGroup03 finds the last group of GuideLLM 0.3's merging (each event
// joins the group of the event that opened it when within 1 µs of it):
// its start and its count.
func lastGroup03(tail func(cut float64) []event, gs, ge float64) (start, count float64) {
	es := lastRun(tail, gs, ge, 1e-3, guideEps)
	start = es[0].t
	for _, e := range es {
		if e.t-start <= guideEps {
			count += e.n
			continue
		}
		start, count = e.t, e.n
	}
	return start, count
}

// lastRun returns the sorted events from the last gap wider than gap to
// the end: events that close cannot merge across such a gap, so only these
// decide the last group. tail(cut) gives the events from cut on; cut moves
// back from the end (first by w) until they hold such a gap, or reach the
// first event at tmin, and then every event is returned.
func lastRun(tail func(cut float64) []event, tmin, tmax, w, gap float64) []event {
	for ; ; w *= 8 {
		cut := tmax - w
		all := cut <= tmin
		es := tail(math.Max(cut, tmin))
		for i := len(es) - 1; i >= 1; i-- {
			if es[i].t-es[i-1].t > gap {
				return es[i:]
			}
		}
		if all {
			return es
		}
	}
}

func sortedEvents(m map[float64]float64) []event {
	es := make([]event, 0, len(m))
	for t, n := range m {
		es = append(es, event{t, n})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].t < es[j].t })
	return es
}

// guide08Tokens is the mean of GuideLLM 0.8's output_tokens_per_second
// (or tokens_per_second) distribution over successful requests
// (StatusDistributionSummary.rate_distribution_from_timings of
// GenerativeRequestStats.output_tokens_timings): a request's first token
// at its first text event, the rest spread over its text events; events
// within 0.1 ms merge into the earliest; the mean is every token over the
// time from the first event to the last merged one.
func guide08Tokens(reqs []glReq, total bool) (float64, bool) {
	type spread struct {
		f, step, last float64
		firstN, iterN float64
		iters         int
	}
	var ss []spread
	var single []event
	tmin, tmax := math.Inf(1), math.Inf(-1)
	sum := 0.0
	see := func(t, n float64) {
		tmin, tmax = math.Min(tmin, t), math.Max(tmax, t)
		sum += n
	}
	for _, q := range reqs {
		if total {
			at := q.d
			if q.has {
				at = q.f
			}
			single = append(single, event{at, float64(q.p)})
			see(at, float64(q.p))
		}
		if !q.has || q.iters <= 1 {
			at := q.d
			if q.has {
				at = q.last
			}
			single = append(single, event{at, float64(q.n)})
			see(at, float64(q.n))
			continue
		}
		sp := spread{f: q.f, last: q.last, iters: q.iters}
		if q.n > 0 {
			sp.firstN = 1
		}
		see(q.f, sp.firstN)
		if q.n > 1 {
			sp.iterN = float64(q.n-1) / float64(q.iters-1)
			sp.step = (q.last - q.f) / float64(q.iters-1)
			for i := 1; i < q.iters; i++ {
				sum += sp.iterN
			}
			tmax = math.Max(tmax, q.last)
		}
		ss = append(ss, sp)
	}
	if math.IsInf(tmin, 1) {
		return 0, false
	}
	tail := func(cut float64) []event {
		m := map[float64]float64{}
		for _, e := range single {
			if e.t >= cut {
				m[e.t] += e.n
			}
		}
		for _, sp := range ss {
			if sp.f >= cut {
				m[sp.f] += sp.firstN
			}
			if sp.iterN == 0 {
				continue
			}
			for i := sp.iters - 1; i >= 1; i-- {
				t := float64(i)*sp.step + sp.f // np.linspace
				if i == sp.iters-1 {
					t = sp.last
				}
				if t < cut {
					break
				}
				m[t] += sp.iterN
			}
		}
		return sortedEvents(m)
	}
	start := lastStart08(tail, tmin, tmax)
	if start <= tmin {
		return 0, true
	}
	return sum / (start - tmin), true
}

// guide08Requests is the mean of GuideLLM 0.8's requests_per_second: one
// event at each successful end inside the measured window [from, to], the
// window's ends added, merged as above.
func guide08Requests(reqs []glReq, from, to float64) (float64, bool) {
	if to <= from {
		return 0, false
	}
	n := 0.0
	for _, q := range reqs {
		if q.d >= from && q.d <= to {
			n++
		}
	}
	tail := func(cut float64) []event {
		m := map[float64]float64{from: 0, to: 0}
		for _, q := range reqs {
			if q.d >= from && q.d <= to && q.d >= cut {
				m[q.d]++
			}
		}
		for t := range m {
			if t < cut {
				delete(m, t)
			}
		}
		return sortedEvents(m)
	}
	start := lastStart08(tail, from, to)
	if start <= from {
		return 0, true
	}
	return n / (start - from), true
}

// lastStart08 is the time of the last event left by GuideLLM 0.8's
// merging (_merge_sorted_times_with_weights, repeated until no two
// events are within 0.1 ms), decided by the events after the last larger
// gap (lastRun).
func lastStart08(tail func(cut float64) []event, tmin, tmax float64) float64 {
	es := lastRun(tail, tmin, tmax, 1e-2, guideThreshold)
	ts := make([]float64, len(es))
	for i, e := range es {
		ts[i] = e.t
	}
	ts = merge08(ts)
	return ts[len(ts)-1]
}

// merge08 is GuideLLM 0.8's merge of sorted distinct times: each pass
// opens a group where a run of gaps of at most 0.1 ms starts, takes into
// it the times up to 0.1 ms after its start, drops a group that starts
// inside the previous one, and keeps each group's start; passes repeat
// until no gap is that small.
func merge08(ts []float64) []float64 {
	for len(ts) > 1 {
		within := make([]bool, len(ts)-1)
		anyWithin := false
		for i := range within {
			within[i] = ts[i+1]-ts[i] <= guideThreshold
			anyWithin = anyWithin || within[i]
		}
		if !anyWithin {
			break
		}
		var starts, ends []int
		for i, w := range within {
			if w && (i == 0 || !within[i-1]) {
				starts = append(starts, i)
				lim := ts[i] + guideThreshold
				ends = append(ends, sort.Search(len(ts), func(k int) bool { return ts[k] > lim })-1)
			}
		}
		keep := make([]bool, len(ts))
		for i := range keep {
			keep[i] = true
		}
		for g, s := range starts {
			if g > 0 && s <= ends[g-1] {
				continue // chained into the previous group: the next pass
			}
			for k := s + 1; k <= ends[g]; k++ {
				keep[k] = false
			}
		}
		out := ts[:0:0]
		for i, t := range ts {
			if keep[i] {
				out = append(out, t)
			}
		}
		ts = out
	}
	return ts
}
