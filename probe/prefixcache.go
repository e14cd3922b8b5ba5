// Package probe runs short, purposeful experiments against a server and
// judges what they show: the prefix-cache probe sends new prompts, the same
// prompts again, different ones and the first ones once more, and says
// whether the server's cache behaved as a prefix cache should (a repeated
// prompt hits, a new one misses). It judges by the server's own count of
// cached prompt tokens where the API reports one, and by TTFT, with its
// interval, where it does not.
package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/internal/fielderr"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Defaults of a Config's zero fields.
const (
	DefaultInputTokens = 1024
	DefaultMaxTokens   = 8
	// DefaultRepeats is the prompts per step: 6 is the fewest for which
	// the median TTFT has a 95% interval (2·(1/2)⁶ < 0.05), so a step
	// judged by TTFT can get a verdict.
	DefaultRepeats = 6
)

// Classes of one request, by the share of its prompt the server served
// from its cache: a hit is at least hitShare (a repeat caches all but a
// partial last block), a miss at most missShare (prompts share a chat
// template's few tokens, which a block cache may find).
const (
	hitShare  = 0.8
	missShare = 0.2

	Hit       = "HIT"
	PrefixHit = "PREFIX_HIT"
	Miss      = "MISS"
)

// Config is one probe.
type Config struct {
	// Replay holds the server settings (URL, API, model, key, headers,
	// timeouts); Workload, Salt, ServerCache and the sinks are set here.
	Replay      replay.Config
	Tokenizer   string
	Shape       workload.Shape
	InputTokens int
	MaxTokens   int
	Repeats     int
	Seed        int64 // of the prompts; Settings.Run makes 0 one new to the run
}

func fieldErr(field, problem, fix string) error {
	return fielderr.New("probe: Config", field, problem, fix)
}

// Step is one step of the probe and its verdict.
type Step struct {
	Name     string
	Expected string // Hit or Miss
	Actual   string // the class most of its requests fell in ("" when none succeeded)
	Status   string // PASS, FAIL or UNSURE
	By       string // "cached tokens" or "TTFT"
	Counts   map[string]int
	OK       int
	Failed   int
	// CachedShare is the median share of the prompt served from cache
	// (NaN when the server reports none).
	CachedShare float64
	// TTFT median and its 95% interval, in milliseconds.
	TTFT, TTFTLo, TTFTHi float64
	Why                  string
}

// Result is a whole probe.
type Result struct {
	Steps   []Step
	Verdict string // PASS when every step passed, FAIL when one failed, else UNSURE
	Summary *replay.Summary
}

var steps = []struct{ name, expected string }{
	{"1 new prompts", Miss},
	{"2 the same prompts again", Hit},
	{"3 different prompts", Miss},
	{"4 the first prompts once more", Hit},
}

// resolve applies the defaults and checks the settings: the one place
// either happens.
func (cfg Config) resolve() (Config, error) {
	cfg.InputTokens = cmp.Or(cfg.InputTokens, DefaultInputTokens)
	cfg.MaxTokens = cmp.Or(cfg.MaxTokens, DefaultMaxTokens)
	cfg.Repeats = cmp.Or(cfg.Repeats, DefaultRepeats)
	switch {
	case cfg.Repeats < 1 || cfg.Repeats > 1000:
		return cfg, fieldErr("Repeats", fmt.Sprintf("is %d", cfg.Repeats), "give 1 to 1000 prompts per step (6 or more for a TTFT verdict)")
	case cfg.InputTokens < 64:
		return cfg, fieldErr("InputTokens", fmt.Sprintf("is %d", cfg.InputTokens), "give at least 64: a cache works in blocks of 16 or more tokens")
	case cfg.MaxTokens < 1:
		return cfg, fieldErr("MaxTokens", fmt.Sprintf("is %d", cfg.MaxTokens), "give at least 1")
	}
	return cfg, nil
}

// Check reports a setting the probe would refuse, before anything starts
// (a caller that starts a simulator first).
func (cfg Config) Check() error {
	_, err := cfg.resolve()
	return err
}

// PrefixCache runs the prefix-cache probe.
func PrefixCache(ctx context.Context, cfg Config) (*Result, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	wl, err := buildWorkload(cfg)
	if err != nil {
		return nil, err
	}
	recs, sum, err := runCached(ctx, cfg.Replay, wl)
	if err != nil {
		return &Result{Summary: sum}, err
	}
	res := judge(recs)
	res.Summary = sum
	return res, nil
}

// runCached replays wl with the cache reachable (no salt; the server's
// cache switched on where the API has one, llama.cpp's cache_prompt) and
// keeps a copy of every finished record for the verdict, passing each on
// to the caller's OnRecord.
func runCached(ctx context.Context, rc replay.Config, wl *workload.Workload) ([]*trace.Record, *replay.Summary, error) {
	rc.Workload = wl
	rc.Salt = false // the point is to reach the cache
	rc.ServerCache = cmp.Or(rc.ServerCache, "on")
	var mu sync.Mutex
	var recs []*trace.Record
	prev := rc.OnRecord
	rc.OnRecord = func(r *trace.Record) {
		mu.Lock()
		recs = append(recs, r.Clone())
		mu.Unlock()
		if prev != nil {
			prev(r)
		}
	}
	sum, err := replay.Run(ctx, rc)
	return recs, sum, err
}

// buildWorkload makes the probe's four steps: Repeats unique prompts (seed
// s), the same again, Repeats other unique prompts (seed s+1), the first
// ones once more. Each step is a closed loop of one: the requests go one at
// a time, so each finds the cache as the one before left it.
func buildWorkload(cfg Config) (*workload.Workload, error) {
	build := func(seed int64) (*workload.Workload, error) {
		return workload.Build(workload.BuildConfig{Tokenizer: cfg.Tokenizer, Shape: cfg.Shape, InputTokens: []int{cfg.InputTokens},
			MaxTokens: cfg.MaxTokens, Schedule: "closed:1", Requests: cfg.Repeats, Seed: seed, SaltWords: workload.NoSaltWords})
	}
	first, err := build(cfg.Seed)
	if err != nil {
		return nil, err
	}
	other, err := build(cfg.Seed + 1)
	if err != nil {
		return nil, err
	}
	wl := &workload.Workload{Header: first.Header}
	wl.Header.Schedule = workload.Schedule{Kind: "probe", Spec: "probe:prefix-cache", Repeats: 1}
	wl.Header.Params.Schedule = "probe:prefix-cache"
	wl.Header.Phases = nil
	for i, st := range steps {
		src := first
		if i == 2 {
			src = other
		}
		wl.Header.Phases = append(wl.Header.Phases, workload.Phase{Index: i, Name: fmt.Sprintf("step%d", i+1), Kind: "closed",
			Concurrency: 1, InputTokens: cfg.InputTokens, MaxTokens: cfg.MaxTokens, Repeat: 1, Requests: len(src.Requests), Note: st.name})
		for _, r := range src.Requests {
			r.ID = fmt.Sprintf("s%d-%04d", i+1, r.Index)
			r.Index = len(wl.Requests)
			r.Phase = i
			r.Slot = 0
			wl.Requests = append(wl.Requests, r)
		}
	}
	wl.Header.Requests = len(wl.Requests)
	return wl, nil
}

// judge turns the records into the steps' verdicts.
func judge(recs []*trace.Record) *Result {
	res := &Result{Verdict: "PASS"}
	type reqFacts struct {
		ok    bool
		share float64 // NaN: no count reported
		ttft  float64 // ms
	}
	by := make([][]reqFacts, len(steps))
	for _, r := range recs {
		if r.Warmup || r.Phase < 0 || r.Phase >= len(steps) {
			continue
		}
		f := reqFacts{ok: r.Error == nil, share: math.NaN(), ttft: math.NaN()}
		if f.ok {
			if c, ok := analyze.CachedTokens(r); ok {
				if p := promptTokens(r); p > 0 {
					f.share = float64(c) / float64(p)
				}
			}
			for _, ch := range r.Chunks {
				if ch.Text != "" || ch.Reasoning != "" {
					f.ttft = float64(ch.T-r.Sent) / 1e6
					break
				}
			}
		}
		by[r.Phase] = append(by[r.Phase], f)
	}
	dists := make([]analyze.Dist, len(steps))
	for i, st := range steps {
		s := Step{Name: st.name, Expected: st.expected, Counts: map[string]int{}, CachedShare: math.NaN(),
			TTFT: math.NaN(), TTFTLo: math.NaN(), TTFTHi: math.NaN()}
		var shares []float64
		for _, f := range by[i] {
			if !f.ok {
				s.Failed++
				continue
			}
			s.OK++
			if !math.IsNaN(f.ttft) {
				dists[i].Add(f.ttft)
			}
			if !math.IsNaN(f.share) {
				shares = append(shares, f.share)
				s.Counts[classOf(f.share)]++
			}
		}
		if dists[i].N() > 0 {
			s.TTFT, s.TTFTLo, s.TTFTHi = dists[i].QuantileCI(0.5, analyze.Confidence)
		}
		switch {
		case s.OK == 0:
			s.Status, s.Why = "UNSURE", fmt.Sprintf("no request succeeded (%d failed)", s.Failed)
		case len(shares) > 0 && 2*len(shares) >= s.OK:
			s.By = "cached tokens"
			s.CachedShare = median(shares)
			s.Actual = majority(s.Counts)
			n := s.Counts[st.expected]
			switch {
			case n == len(shares):
				s.Status = "PASS"
			case s.Actual != st.expected:
				s.Status = "FAIL"
			default:
				s.Status = "UNSURE"
			}
			s.Why = fmt.Sprintf("%d of %d requests %s (the server's cached-token count; median %.0f%% of the prompt from cache)",
				n, len(shares), st.expected, 100*s.CachedShare)
		default:
			s.By = "TTFT"
			judgeByTTFT(&s, i, dists)
		}
		res.Steps = append(res.Steps, s)
	}
	for _, s := range res.Steps {
		switch {
		case s.Status == "FAIL":
			res.Verdict = "FAIL"
		case s.Status == "UNSURE" && res.Verdict == "PASS":
			res.Verdict = "UNSURE"
		}
	}
	return res
}

// judgeByTTFT judges a step from TTFT alone, against the step before it:
// a hit must be faster than the miss before it, a miss slower than the hit
// before it, each with the whole 95% intervals of the medians apart. The
// first step is the baseline: a server that reports no cached tokens
// cannot show a miss by TTFT alone.
func judgeByTTFT(s *Step, i int, dists []analyze.Dist) {
	if i == 0 {
		s.Actual, s.Status = Miss, "PASS"
		s.Why = "the baseline: new prompts cannot have been cached (the server reports no cached-token count, so later steps are judged by TTFT against this one)"
		return
	}
	_, plo, phi := dists[i-1].QuantileCI(0.5, analyze.Confidence)
	switch {
	case math.IsInf(s.TTFTLo, 0) || math.IsInf(s.TTFTHi, 0) || math.IsInf(plo, 0) || math.IsInf(phi, 0) || math.IsNaN(s.TTFTLo) || math.IsNaN(plo):
		s.Status = "UNSURE"
		s.Why = fmt.Sprintf("too few requests for a 95%% interval of the median TTFT (give %d or more per step)", DefaultRepeats)
	case s.TTFTHi < plo: // faster than the step before
		s.Actual = Hit
		s.Why = fmt.Sprintf("median TTFT %.1f ms [%.1f, %.1f] below the step before's [%.1f, %.1f]", s.TTFT, s.TTFTLo, s.TTFTHi, plo, phi)
	case s.TTFTLo > phi: // slower than the step before
		s.Actual = Miss
		s.Why = fmt.Sprintf("median TTFT %.1f ms [%.1f, %.1f] above the step before's [%.1f, %.1f]", s.TTFT, s.TTFTLo, s.TTFTHi, plo, phi)
	default:
		s.Status = "UNSURE"
		s.Why = fmt.Sprintf("median TTFT %.1f ms [%.1f, %.1f] overlaps the step before's [%.1f, %.1f]", s.TTFT, s.TTFTLo, s.TTFTHi, plo, phi)
		return
	}
	if s.Actual == s.Expected {
		s.Status = "PASS"
	} else {
		s.Status = "FAIL"
	}
}

func classOf(share float64) string {
	switch {
	case share >= hitShare:
		return Hit
	case share > missShare:
		return PrefixHit
	}
	return Miss
}

func majority(c map[string]int) string {
	best, n := "", -1
	for _, k := range []string{Hit, PrefixHit, Miss} {
		if c[k] > n {
			best, n = k, c[k]
		}
	}
	return best
}

func median(v []float64) float64 {
	var d analyze.Dist
	for _, x := range v {
		d.Add(x)
	}
	c, _, _ := d.QuantileCI(0.5, analyze.Confidence)
	return c
}

// promptTokens is the server's prompt-token count (OpenAI prompt_tokens,
// Responses/Anthropic input_tokens, llama.cpp tokens_evaluated), else the
// workload's count.
func promptTokens(r *trace.Record) int {
	for _, s := range []string{r.Usage, r.Timings} {
		var u struct {
			Prompt    *int `json:"prompt_tokens"`
			Input     *int `json:"input_tokens"`
			Evaluated *int `json:"tokens_evaluated"`
			PromptN   *int `json:"prompt_n"`
			CacheN    *int `json:"cache_n"`
		}
		if s == "" || json.Unmarshal([]byte(s), &u) != nil {
			continue
		}
		switch {
		case u.Prompt != nil && *u.Prompt > 0:
			return *u.Prompt
		case u.Input != nil && *u.Input > 0:
			return *u.Input
		case u.Evaluated != nil && *u.Evaluated > 0:
			return *u.Evaluated
		case u.PromptN != nil && u.CacheN != nil && *u.PromptN+*u.CacheN > 0:
			return *u.PromptN + *u.CacheN // llama.cpp: prompt_n counts only what was prefilled
		}
	}
	return r.InputTokens
}

// Render prints the probe's table: step, expected, actual, status, and why.
func (r *Result) Render(w io.Writer) error {
	fmt.Fprintf(w, "%-32s %-9s %-11s %-7s %s\n", "step", "expected", "actual", "status", "evidence")
	for _, s := range r.Steps {
		actual := s.Actual
		actual = cmp.Or(actual, "—")
		if _, err := fmt.Fprintf(w, "%-32s %-9s %-11s %-7s %s\n", s.Name, s.Expected, actual, s.Status, s.Why); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "prefix cache: %s\n", r.Verdict)
	return err
}
