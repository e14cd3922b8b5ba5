package servermetrics

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmreplay/llmreplay/trace"
)

// Meaning is what a known metric says, whatever the engine calls it.
type Meaning int

const (
	// Running is requests holding a slot (prefilling or decoding).
	Running Meaning = iota
	// Waiting is requests queued for a slot.
	Waiting
	// KVUsage is the KV cache in use as a fraction (0–1).
	KVUsage
	// Preemptions counts requests the engine evicted to make room
	// (a counter).
	Preemptions
	// PrefixQueries and PrefixHits count prompt tokens looked up in and
	// found in the prefix cache (counters).
	PrefixQueries
	PrefixHits
	// PrefixHitRate is an engine's own hit-rate gauge (0–1), for engines
	// that export a rate instead of counters.
	PrefixHitRate
	// RSS, CPUSeconds and Threads are a watched process's resident
	// memory (bytes), CPU time (user + system seconds, a counter) and
	// thread count (--watch-pid).
	RSS
	CPUSeconds
	Threads
	// GPUMemory is GPU memory in use (bytes, nvidia-smi).
	GPUMemory
	// NumMeanings is the number of meanings (for arrays indexed by them).
	NumMeanings
)

var meaningNames = [NumMeanings]string{"running", "waiting", "kv_usage", "preemptions", "prefix_queries", "prefix_hits", "prefix_hit_rate", "rss_bytes", "cpu_seconds", "threads", "gpu_memory_bytes"}

func (m Meaning) String() string { return meaningNames[m] }

// Known is one engine's name for a meaning. Where several series share the
// name (labels by model, engine or GPU), counts add up and ratios take the
// largest: two engines behind one endpoint hold the sum of their requests,
// and the fuller KV cache is the one that preempts.
type Known struct {
	Engine, Name string
	Meaning      Meaning
}

// KnownNames are the names mapped, with where each engine documents them:
//   - vLLM: docs.vllm.ai, "Production Metrics" / design/metrics (V1 names;
//     gpu_cache_usage_perc and gpu_prefix_cache_* are the older ones);
//   - SGLang: docs.sglang.ai, "Production Metrics";
//   - llama.cpp: tools/server/README.md, "GET /metrics" (server started
//     with --metrics);
//   - TGI: huggingface.co/docs/text-generation-inference, "Metrics";
//   - llmreplay's simulator: sim/metrics.go.
var KnownNames = []Known{
	{"vllm", "vllm:num_requests_running", Running},
	{"vllm", "vllm:num_requests_waiting", Waiting},
	{"vllm", "vllm:kv_cache_usage_perc", KVUsage},
	{"vllm", "vllm:gpu_cache_usage_perc", KVUsage},
	{"vllm", "vllm:num_preemptions_total", Preemptions},
	{"vllm", "vllm:prefix_cache_queries_total", PrefixQueries},
	{"vllm", "vllm:prefix_cache_hits_total", PrefixHits},
	{"vllm", "vllm:gpu_prefix_cache_queries_total", PrefixQueries},
	{"vllm", "vllm:gpu_prefix_cache_hits_total", PrefixHits},
	{"vllm", "vllm:gpu_prefix_cache_hit_rate", PrefixHitRate},
	{"sglang", "sglang:num_running_reqs", Running},
	{"sglang", "sglang:num_queue_reqs", Waiting},
	{"sglang", "sglang:token_usage", KVUsage},
	{"sglang", "sglang:cache_hit_rate", PrefixHitRate},
	{"llama.cpp", "llamacpp:requests_processing", Running},
	{"llama.cpp", "llamacpp:requests_deferred", Waiting},
	{"llama.cpp", "llamacpp:kv_cache_usage_ratio", KVUsage},
	{"tgi", "tgi_batch_current_size", Running},
	{"tgi", "tgi_queue_size", Waiting},
	{"llmreplay-sim", "llmreplay_sim_num_requests_running", Running},
	{"llmreplay-sim", "llmreplay_sim_num_requests_waiting", Waiting},
	{"llmreplay-sim", "llmreplay_sim_kv_cache_usage_perc", KVUsage},
	{"llmreplay-sim", "llmreplay_sim_num_preemptions_total", Preemptions},
	{"llmreplay-sim", "llmreplay_sim_prefix_cache_queries_total", PrefixQueries},
	{"llmreplay-sim", "llmreplay_sim_prefix_cache_hits_total", PrefixHits},
	// --watch-pid's samples (procwatch): the process with its descendants.
	{"process", "process_tree_resident_memory_bytes", RSS},
	{"process", "process_tree_cpu_seconds_total", CPUSeconds},
	{"process", "process_tree_threads", Threads},
	{"process", "gpu_memory_used_bytes", GPUMemory},
}

var byName = func() map[string]Known {
	m := map[string]Known{}
	for _, k := range KnownNames {
		m[k.Name] = k
	}
	return m
}()

// TTFTHistograms are the engines' server-side TTFT histograms (seconds),
// by the name of their family: from a request reaching the engine to its
// first token.
var TTFTHistograms = map[string]string{
	"vllm:time_to_first_token_seconds":          "vllm",
	"sglang:time_to_first_token_seconds":        "sglang",
	"llmreplay_sim_time_to_first_token_seconds": "llmreplay-sim",
}

// Bucket is one cumulative histogram bucket: Count observations ≤ LE.
type Bucket struct {
	LE    float64
	Count float64
}

// State is what one scrape says in common terms: Value[m] is NaN where the
// scrape has no known name for m.
type State struct {
	Value [NumMeanings]float64
	// TTFT is the server's TTFT histogram (cumulative buckets by
	// increasing LE, +Inf last, summed over its series), nil when the
	// scrape has none.
	TTFT []Bucket
	// Engine is the engine whose names were recognised ("" for none).
	Engine string
	// Dropped counts, per meaning, the samples of a known name whose
	// value could not be a reading: not finite, negative, a ratio past
	// 100 %, a count of requests past MaxRequestsGauge, or a sum that
	// overflows. A broken or hostile endpoint sends them; charts and
	// peaks leave them out and say so.
	Dropped [NumMeanings]int
}

// MaxRequestsGauge bounds a reading of requests running or waiting: ten
// million is thousands of times what one engine holds, so a larger value
// (1e308) is a broken endpoint, not a queue.
const MaxRequestsGauge = 1e7

// Has reports whether s holds a value for m.
func (s *State) Has(m Meaning) bool { return !math.IsNaN(s.Value[m]) }

// Read maps a scrape's samples to common meanings. Samples of the process
// meanings count only from a watched-process scrape: an engine's own
// process_resident_memory_bytes is its HTTP front end's, not the engine's.
func Read(sc *trace.Scrape) State {
	var st State
	for i := range st.Value {
		st.Value[i] = math.NaN()
	}
	if sc.Error != "" {
		return st
	}
	proc := sc.Source == trace.SourceProcess
	var ttft map[float64]float64
	for _, s := range sc.Samples {
		if base, ok := strings.CutSuffix(s.Name, "_bucket"); ok && !proc {
			if _, known := TTFTHistograms[base]; known {
				if le, ok := leOf(s.Labels); ok && isFinite(s.Value) && s.Value >= 0 {
					if ttft == nil {
						ttft = map[float64]float64{}
					}
					ttft[le] += s.Value
				}
				continue
			}
		}
		k, ok := byName[s.Name]
		if !ok || (k.Engine == "process") != proc {
			continue
		}
		if !isFinite(s.Value) || s.Value < 0 {
			st.Dropped[k.Meaning]++
			continue
		}
		v := s.Value
		cur := st.Value[k.Meaning]
		switch k.Meaning {
		case KVUsage, PrefixHitRate:
			// Ratios: the largest series; a value past 1 is an engine
			// reporting a percentage, read as one.
			if v > 1 && v <= 100 {
				v /= 100
			}
			if v > 1 {
				st.Dropped[k.Meaning]++
				continue
			}
			if math.IsNaN(cur) || v > cur {
				st.Value[k.Meaning] = v
			}
		default:
			if math.IsNaN(cur) {
				cur = 0
			}
			if sum := cur + v; !isFinite(sum) || (k.Meaning == Running || k.Meaning == Waiting) && sum > MaxRequestsGauge {
				st.Dropped[k.Meaning]++
				continue
			}
			st.Value[k.Meaning] = cur + v
		}
		if k.Engine != "process" && st.Engine == "" {
			st.Engine = k.Engine
		}
	}
	if len(ttft) > 0 {
		for le, c := range ttft {
			st.TTFT = append(st.TTFT, Bucket{LE: le, Count: c})
		}
		sort.Slice(st.TTFT, func(i, j int) bool { return st.TTFT[i].LE < st.TTFT[j].LE })
	}
	return st
}

// leOf reads the le label of a histogram bucket's labels (the text
// format's form, as trace.Sample holds them).
func leOf(labels string) (float64, bool) {
	i := strings.Index(labels, `le="`)
	if i < 0 || (i > 0 && labels[i-1] != ',') {
		return 0, false
	}
	rest := labels[i+4:]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(rest[:j], 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// Quantile estimates the q-quantile of the observations a histogram's
// buckets count, as Prometheus's histogram_quantile does: linear within
// the bucket it falls in. It also returns that bucket's bounds. ok is
// false without observations, or when the quantile falls in the +Inf
// bucket.
func Quantile(b []Bucket, q float64) (v, lo, hi float64, ok bool) {
	if len(b) == 0 || !math.IsInf(b[len(b)-1].LE, 1) {
		return 0, 0, 0, false
	}
	total := b[len(b)-1].Count
	if total <= 0 {
		return 0, 0, 0, false
	}
	rank := q * total
	prevLE, prevC := 0.0, 0.0
	for _, x := range b {
		if x.Count >= rank {
			if math.IsInf(x.LE, 1) {
				return 0, 0, 0, false
			}
			frac := 0.0
			if x.Count > prevC {
				frac = (rank - prevC) / (x.Count - prevC)
			}
			return prevLE + frac*(x.LE-prevLE), prevLE, x.LE, true
		}
		prevLE, prevC = x.LE, x.Count
	}
	return 0, 0, 0, false
}
