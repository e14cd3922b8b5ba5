package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// Server timers: what a server says about its own work on one request,
// read from what every trace already holds (no re-recording): llama.cpp's
// `timings` (predicted_n/predicted_ms, prompt_n/prompt_ms, cache_n),
// Ollama's eval_count/eval_duration and prompt_eval_count/
// prompt_eval_duration (ns), OpenAI-style usage.prompt_tokens_details.
// cached_tokens. Set beside what the stream delivered they show what the
// serving layer costs, and catch a server whose self-reported speed is not
// what its clients get.

// serverTimers are one request's server-reported figures; a zero rate or a
// negative cached count means "not reported".
type serverTimers struct {
	decodeTPS, prefillTPS float64
	cached                int
	// reasoning is the server's count of the reasoning tokens inside its
	// completion count (OpenAI's completion_tokens_details, the Responses
	// API's output_tokens_details), −1 when it sends none.
	reasoning int
}

// maxServerRate bounds a server-reported rate that is used at all: no
// engine decodes or prefills a single request at 10 M tok/s, so a larger
// figure is a broken or hostile timer, recorded in the trace and ignored
// here.
const maxServerRate = 1e7

// rate is n tokens over d seconds when both are plausible.
func rate(n, seconds float64) float64 {
	if n <= 0 || seconds <= 0 || math.IsInf(n, 0) || math.IsNaN(n) || math.IsInf(seconds, 0) {
		return 0
	}
	r := n / seconds
	if r > maxServerRate {
		return 0
	}
	return r
}

// timerFields are the keys of the servers' usage and timings objects that
// carry their own timers.
type timerFields struct {
	PredictedN   float64        `json:"predicted_n"`
	PredictedMs  float64        `json:"predicted_ms"`
	PromptN      float64        `json:"prompt_n"`
	PromptMs     float64        `json:"prompt_ms"`
	CacheN       *int64         `json:"cache_n"`
	TokensCached *int64         `json:"tokens_cached"`
	EvalCount    float64        `json:"eval_count"`
	EvalDur      float64        `json:"eval_duration"`
	PromptEval   float64        `json:"prompt_eval_count"`
	PromptDur    float64        `json:"prompt_eval_duration"`
	Details      *cachedDetails `json:"prompt_tokens_details"`
	// SGLang's meta_info cached_tokens, the Responses API's
	// input_tokens_details, Anthropic's cache_read_input_tokens.
	Cached       *int64         `json:"cached_tokens"`
	InputDetails *cachedDetails `json:"input_tokens_details"`
	CacheRead    *int64         `json:"cache_read_input_tokens"`
	// The reasoning tokens counted in the completion: Chat Completions'
	// completion_tokens_details, the Responses API's output_tokens_details.
	CompletionDetails *reasoningDetails `json:"completion_tokens_details"`
	OutputDetails     *reasoningDetails `json:"output_tokens_details"`
}

type reasoningDetails struct {
	Reasoning *int64 `json:"reasoning_tokens"`
}

type cachedDetails struct {
	Cached *int64 `json:"cached_tokens"`
}

// readServerTimers parses the usage and timings objects a record holds.
func readServerTimers(usage, timings string) serverTimers {
	t := serverTimers{cached: -1, reasoning: -1}
	for _, s := range []string{timings, usage} {
		if s == "" || s == "null" {
			continue
		}
		var v timerFields
		if json.Unmarshal([]byte(s), &v) != nil {
			continue
		}
		if t.decodeTPS == 0 {
			t.decodeTPS = max(rate(v.PredictedN, v.PredictedMs/1e3), rate(v.EvalCount, v.EvalDur/1e9))
		}
		if t.prefillTPS == 0 {
			t.prefillTPS = max(rate(v.PromptN, v.PromptMs/1e3), rate(v.PromptEval, v.PromptDur/1e9))
		}
		for _, c := range []*int64{v.CacheN, v.TokensCached, detailsCached(v.Details), v.Cached, detailsCached(v.InputDetails), v.CacheRead} {
			if t.cached < 0 && c != nil && *c >= 0 && *c < 1<<31 {
				t.cached = int(*c)
			}
		}
		for _, d := range []*reasoningDetails{v.CompletionDetails, v.OutputDetails} {
			if t.reasoning < 0 && d != nil && d.Reasoning != nil && *d.Reasoning >= 0 && *d.Reasoning < 1<<31 {
				t.reasoning = int(*d.Reasoning)
			}
		}
	}
	return t
}

func detailsCached(d *cachedDetails) *int64 {
	if d == nil {
		return nil
	}
	return d.Cached
}

// timers parses the record's server figures once per record.
func (f *facts) timers() serverTimers {
	if !f.timersRead {
		f.srv = readServerTimers(f.rec.Usage, f.rec.Timings)
		f.timersRead = true
	}
	return f.srv
}

// serverRate adds a successful request's speed by the server's own timers,
// the one pick gives, where the server reports one.
func serverRate(pick func(serverTimers) float64) func(*facts, *DefinitionSet, *Dist) {
	return okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
		r := pick(f.timers())
		return r, r > 0
	})
}

// serverMetrics are the metrics from servers' own timers (docs/METRICS.md).
var serverMetrics = []*Metric{
	{
		Name: "server_decode_tps", Unit: "tok/s", Scope: PerRequest, HigherIsBetter: true,
		Doc:     "the server's own decode speed for one request: its generated-token count / its decode time (llama.cpp timings predicted_n / predicted_ms; Ollama eval_count / eval_duration), successful requests whose server reports them",
		request: serverRate(func(t serverTimers) float64 { return t.decodeTPS }),
	},
	{
		Name: "server_prefill_tps", Unit: "tok/s", Scope: PerRequest, HigherIsBetter: true,
		Doc:     "the server's own prompt-processing speed: its prompt-token count / its prompt time (llama.cpp prompt_n / prompt_ms; Ollama prompt_eval_count / prompt_eval_duration); tokens served from its cache are not counted by the server",
		request: serverRate(func(t serverTimers) float64 { return t.prefillTPS }),
	},
	{
		Name: "cache_hit_rate", Unit: "fraction", Scope: PerRequest, HigherIsBetter: true,
		Doc: "the share of a request's prompt the server says it served from its cache: server_cached_tokens / input tokens (the server's prompt count where it sends one), successful requests whose server reports a count (a count above the prompt is not used)",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			c := f.timers().cached
			return float64(c) / float64(f.input), f.input > 0 && c >= 0 && c <= f.input
		}),
	},
	{
		Name: "server_cached_tokens", Unit: "tokens", Scope: PerRequest,
		Doc: "prompt tokens the server says it served from its cache (llama.cpp cache_n or tokens_cached; OpenAI-style usage.prompt_tokens_details.cached_tokens)",
		request: okSample(func(f *facts, _ *DefinitionSet) (float64, bool) {
			c := f.timers().cached
			return float64(c), c >= 0
		}),
	},
	{
		Name: "serving_overhead", Unit: "x", Scope: PerRequest,
		Doc: "what the serving layer takes from the engine's speed, per request: 1 − per_stream_tps / server_decode_tps (0: the stream delivers what the engine decodes; 0.3: the client sees 30% less); median over requests with its interval",
		request: okSample(func(f *facts, d *DefinitionSet) (float64, bool) {
			sd := f.timers().decodeTPS
			ps, ok := f.perStream(d)
			return 1 - ps/sd, sd > 0 && ok
		}),
	},
}

// WarnServerClaimsFaster: the server's own decode timer claims a speed its
// clients did not receive.
const WarnServerClaimsFaster = "server_claims_faster"

// overheadWarn is the serving_overhead above which a group warns. The
// client's per-stream speed spans first to last content chunk, the same
// tokens a server's decode timer counts, so on a healthy server they agree
// to within the framing and scheduling of a local HTTP stream (the
// simulator: under 1%; a real llama.cpp measured here: a few %). 20% is
// far above that and below the 30% gap the source document reports for a
// serving layer that "eats speed".
const overheadWarn = 0.20

// serverWarnings checks a group's serving overhead.
func serverWarnings(g *Group) []Warning {
	v, ok := g.Values["serving_overhead"]
	if !ok || !v.Valid() || v.Value <= overheadWarn {
		return nil
	}
	return []Warning{{Code: WarnServerClaimsFaster, Keys: g.Keys,
		Message: fmt.Sprintf("the server's own decode timer says %s tok/s, but streams received %.0f%% less (serving overhead %.2f over %d requests): the serving layer, not the engine, sets the speed users get",
			FormatNum(g.Values["server_decode_tps"].Value, false), v.Value*100, v.Value, v.N),
		Evidence: map[string]any{"serving_overhead": v.Value, "lo": v.Lo, "hi": v.Hi, "server_decode_tps": g.Values["server_decode_tps"].Value, "per_stream_tps": g.Values["per_stream_tps"].Value, "requests": v.N}}}
}

// CachedTokens is the prompt tokens the server says it served from its
// cache for r (llama.cpp cache_n or tokens_cached; usage
// prompt_tokens_details.cached_tokens), and whether it said.
func CachedTokens(r *trace.Record) (int, bool) {
	t := readServerTimers(r.Usage, r.Timings)
	return t.cached, t.cached >= 0
}

// serverObject is what one pair of usage and timings objects says: the
// token counts (usageCounts) and the server's timers (readServerTimers).
type serverObject struct {
	completion, prompt int
	timers             serverTimers
}

// maxServerObjects and maxServerObjectBytes bound serverObjects' memory
// (entries, and bytes of the strings kept); when either fills it is
// dropped and rebuilt. A pair longer than maxCachedObject is parsed and
// not kept: a server's usage object is a few hundred bytes, and one that
// is not must not fill the cache with copies.
const (
	maxServerObjects     = 1 << 12
	maxServerObjectBytes = 1 << 20
	maxCachedObject      = 4 << 10
)

// serverObjectsGiveUp: after this many misses with fewer than one hit in
// eight, serverObjects stops remembering. llama.cpp's timings carry each
// request's own milliseconds, so every record misses, and copying each
// pair into the map only made such traces slower.
const serverObjectsGiveUp = 1024

// serverObjects parses each distinct pair of usage and timings objects
// once. Responses of one shape carry the same usage object byte for byte
// (a count-up run's say 800 prompt and 256 completion tokens in every
// response), and it was decoded with encoding/json twice per record
// (counts, then timers). The result is a function of the two strings
// alone, so a remembered one is the same as a fresh parse.
type serverObjects struct {
	m            map[[2]string]serverObject
	bytes        int // of the strings kept in m
	hits, misses int
}

func (s *serverObjects) read(usage, timings string) serverObject {
	if usage == "" && timings == "" {
		return serverObject{completion: -1, prompt: -1, timers: serverTimers{cached: -1, reasoning: -1}}
	}
	key := [2]string{usage, timings}
	if o, ok := s.m[key]; ok {
		s.hits++
		return o
	}
	var o serverObject
	o.completion, o.prompt = usageCounts(usage, timings)
	o.timers = readServerTimers(usage, timings)
	s.misses++
	n := len(usage) + len(timings)
	if n > maxCachedObject || (s.misses >= serverObjectsGiveUp && s.hits < s.misses/8) {
		s.m, s.bytes = nil, 0
		return o
	}
	if s.m == nil || len(s.m) >= maxServerObjects || s.bytes+n > maxServerObjectBytes {
		s.m, s.bytes = make(map[[2]string]serverObject), 0
	}
	// The strings are slices of the reader's record: keep copies.
	s.m[[2]string{strings.Clone(usage), strings.Clone(timings)}] = o
	s.bytes += n
	return o
}
