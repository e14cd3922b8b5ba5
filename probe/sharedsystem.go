package probe

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// Defaults of the shared-system-prompt mode, after the second source
// document's paged-cache test: 2 rounds of 10 requests sharing a system
// prompt of about 286 tokens.
const (
	DefaultSystemTokens  = 286
	DefaultRounds        = 2
	DefaultRoundRequests = 10
	// DefaultUserTokens is each request's own user message: short, so the
	// shared system prompt is most of the prompt, and long enough for the
	// count-up instruction and a unique opening.
	DefaultUserTokens = 64
)

// SharedConfig is one shared-system-prompt probe: Rounds bursts of
// Requests requests, each prompt the same SystemTokens-token system prompt
// followed by a user message of its own (UserTokens tokens).
type SharedConfig struct {
	Replay       replay.Config
	Tokenizer    string
	SystemTokens int
	UserTokens   int
	MaxTokens    int
	Rounds       int
	Requests     int
	Seed         int64
}

func (cfg SharedConfig) resolve() (SharedConfig, error) {
	cfg.SystemTokens = cmp.Or(cfg.SystemTokens, DefaultSystemTokens)
	cfg.UserTokens = cmp.Or(cfg.UserTokens, DefaultUserTokens)
	cfg.MaxTokens = cmp.Or(cfg.MaxTokens, DefaultMaxTokens)
	cfg.Rounds = cmp.Or(cfg.Rounds, DefaultRounds)
	cfg.Requests = cmp.Or(cfg.Requests, DefaultRoundRequests)
	switch {
	case cfg.Rounds < 2 || cfg.Rounds > 100:
		return cfg, fieldErr("Rounds", fmt.Sprintf("is %d", cfg.Rounds), "give 2 to 100 rounds (the first is the cold one)")
	case cfg.Requests < 1 || cfg.Requests > 1000:
		return cfg, fieldErr("Requests", fmt.Sprintf("is %d", cfg.Requests), "give 1 to 1000 requests per round")
	case cfg.SystemTokens < 64 || cfg.SystemTokens > workload.MaxInputTokens:
		return cfg, fieldErr("SystemTokens", fmt.Sprintf("is %d", cfg.SystemTokens), fmt.Sprintf("give 64 to %d: a cache works in blocks of 16 or more tokens", workload.MaxInputTokens))
	case cfg.UserTokens < 1:
		return cfg, fieldErr("UserTokens", fmt.Sprintf("is %d", cfg.UserTokens), "give at least 1")
	case cfg.MaxTokens < 1:
		return cfg, fieldErr("MaxTokens", fmt.Sprintf("is %d", cfg.MaxTokens), "give at least 1")
	}
	return cfg, nil
}

// Check reports a setting the probe would refuse, before anything starts.
func (cfg SharedConfig) Check() error {
	_, err := cfg.resolve()
	return err
}

// Round is one round of the shared-system-prompt probe.
type Round struct {
	OK, Failed int
	// Reported is how many successful requests carried the server's
	// cached-token count; Hits how many of those had at least half the
	// system prompt from the cache; Cached the sum of their counts.
	Reported, Hits, Cached int
	// TTFT median and its 95% interval, in milliseconds.
	TTFT, TTFTLo, TTFTHi float64
}

// SharedResult is a whole shared-system-prompt probe.
type SharedResult struct {
	SystemTokens int
	Rounds       []Round
	// By is "cached tokens" or "TTFT": what the verdict was judged by.
	By string
	// Cold and Warm are the median TTFTs (ms, with 95% intervals) of the
	// requests that missed and that hit (by count), or of the first round
	// and the later ones (by TTFT). All prompts have the same length, so
	// the two differ by what the cache saved.
	Cold, ColdLo, ColdHi float64
	Warm, WarmLo, WarmHi float64
	// SpeedUp is Cold/Warm; its interval divides the ends of the two
	// medians' intervals (ColdLo/WarmHi, ColdHi/WarmLo). NaN when either
	// side has no request.
	SpeedUp, SpeedUpLo, SpeedUpHi float64
	Verdict                       string // PASS, FAIL or UNSURE
	Why                           string
	Summary                       *replay.Summary
}

// SharedSystem runs the shared-system-prompt probe: the rounds are bursts
// sent one after another, so every round after the first finds the system
// prompt in the cache, and each of its requests should hit it.
func SharedSystem(ctx context.Context, cfg SharedConfig) (*SharedResult, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	wl, err := workload.Build(workload.BuildConfig{Tokenizer: cfg.Tokenizer, Shape: workload.ShapeChat,
		InputTokens: []int{cfg.UserTokens}, MaxTokens: cfg.MaxTokens, Schedule: fmt.Sprintf("burst:%d", cfg.Requests),
		Repeats: cfg.Rounds, Seed: cfg.Seed, SaltWords: workload.NoSaltWords, SystemTokens: cfg.SystemTokens})
	if err != nil {
		return nil, err
	}
	for i := range wl.Header.Phases {
		wl.Header.Phases[i].Name = fmt.Sprintf("round%d", i+1)
	}
	recs, sum, err := runCached(ctx, cfg.Replay, wl)
	if err != nil {
		return &SharedResult{Summary: sum}, err
	}
	res := judgeShared(recs, cfg.Rounds, cfg.SystemTokens)
	res.Summary = sum
	return res, nil
}

// ttftMS is a successful record's time to its first text, in ms (NaN when
// none came).
func ttftMS(r *trace.Record) float64 {
	for _, ch := range r.Chunks {
		if ch.Text != "" || ch.Reasoning != "" {
			return float64(ch.T-r.Sent) / 1e6
		}
	}
	return math.NaN()
}

// judgeShared turns the records into rounds and a verdict. A request hits
// when the server says at least half the system prompt came from its cache
// (a paged cache reuses whole blocks, up to 256 tokens each in the engines
// modelled, so a hit on 286 tokens may show as 256). With counts for at
// least half the successful requests, the verdict is by count: PASS when
// every request after the first round hit, FAIL when most missed, else
// UNSURE. Without, by TTFT: PASS when every later round's median interval
// lies wholly below the first round's, else UNSURE (TTFT cannot prove a
// cache absent).
func judgeShared(recs []*trace.Record, rounds, system int) *SharedResult {
	res := &SharedResult{SystemTokens: system, Rounds: make([]Round, rounds)}
	dists := make([]analyze.Dist, rounds)
	var cold, warm analyze.Dist
	ok := 0
	for _, r := range recs {
		if r.Warmup || r.Phase < 0 || r.Phase >= rounds {
			continue
		}
		rd := &res.Rounds[r.Phase]
		if r.Error != nil {
			rd.Failed++
			continue
		}
		rd.OK++
		ok++
		t := ttftMS(r)
		if !math.IsNaN(t) {
			dists[r.Phase].Add(t)
		}
		if c, has := analyze.CachedTokens(r); has {
			rd.Reported++
			rd.Cached += c
			if 2*c >= system {
				rd.Hits++
				if !math.IsNaN(t) {
					warm.Add(t)
				}
			} else if !math.IsNaN(t) {
				cold.Add(t)
			}
		}
	}
	reported := 0
	for i := range res.Rounds {
		rd := &res.Rounds[i]
		reported += rd.Reported
		rd.TTFT, rd.TTFTLo, rd.TTFTHi = math.NaN(), math.NaN(), math.NaN()
		if dists[i].N() > 0 {
			rd.TTFT, rd.TTFTLo, rd.TTFTHi = dists[i].QuantileCI(0.5, analyze.Confidence)
		}
	}
	byCount := ok > 0 && 2*reported >= ok
	if !byCount {
		cold, warm = dists[0], analyze.Dist{}
		for i := 1; i < rounds; i++ {
			warm.Merge(&dists[i])
		}
	}
	res.Cold, res.ColdLo, res.ColdHi = ci(&cold)
	res.Warm, res.WarmLo, res.WarmHi = ci(&warm)
	res.SpeedUp, res.SpeedUpLo, res.SpeedUpHi = res.Cold/res.Warm, res.ColdLo/res.WarmHi, res.ColdHi/res.WarmLo
	later, laterHits, laterOK := rounds-1, 0, 0
	for _, rd := range res.Rounds[1:] {
		laterHits += rd.Hits
		laterOK += rd.OK
	}
	switch {
	case laterOK == 0:
		res.By, res.Verdict = "", "UNSURE"
		res.Why = "no request after the first round succeeded"
	case byCount:
		res.By = "cached tokens"
		switch {
		case laterHits == laterOK:
			res.Verdict = "PASS"
		case 2*laterHits < laterOK:
			res.Verdict = "FAIL"
		default:
			res.Verdict = "UNSURE"
		}
		res.Why = fmt.Sprintf("%d of %d requests after the first round hit the system prompt (the server's cached-token count: at least %d of its %d tokens from the cache)",
			laterHits, laterOK, (system+1)/2, system)
	default:
		res.By = "TTFT"
		res.Verdict = "PASS"
		below := 0
		for i := 1; i < rounds; i++ {
			rd := res.Rounds[i]
			if !math.IsNaN(rd.TTFTHi) && !math.IsInf(res.Rounds[0].TTFTLo, 0) && !math.IsNaN(res.Rounds[0].TTFTLo) && rd.TTFTHi < res.Rounds[0].TTFTLo {
				below++
			}
		}
		if below < later {
			res.Verdict = "UNSURE"
		}
		res.Why = fmt.Sprintf("the server reports no cached-token count: %d of %d later rounds have their median TTFT's 95%% interval wholly below the first round's", below, later)
	}
	return res
}

func ci(d *analyze.Dist) (c, lo, hi float64) {
	if d.N() == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return d.QuantileCI(0.5, analyze.Confidence)
}

// Render prints one line a round, the hits, tokens saved, speed-up and the
// verdict.
func (r *SharedResult) Render(w io.Writer) error {
	fmt.Fprintf(w, "%-6s %-9s %-6s %-14s %s\n", "round", "requests", "hits", "cached tokens", "median TTFT ms [95%]")
	hits, saved, reported := 0, 0, 0
	for i, rd := range r.Rounds {
		h, c := "—", "—"
		if rd.Reported > 0 {
			h, c = fmt.Sprint(rd.Hits), fmt.Sprint(rd.Cached)
		}
		hits += rd.Hits
		saved += rd.Cached
		reported += rd.Reported
		n := fmt.Sprint(rd.OK)
		if rd.Failed > 0 {
			n = fmt.Sprintf("%d (+%d failed)", rd.OK, rd.Failed)
		}
		fmt.Fprintf(w, "%-6d %-9s %-6s %-14s %s\n", i+1, n, h, c, interval(rd.TTFT, rd.TTFTLo, rd.TTFTHi, "%.1f"))
	}
	if reported > 0 {
		fmt.Fprintf(w, "hits: %d of %d requests; tokens saved: %d (the server's cached-token counts)\n", hits, reported, saved)
	} else {
		fmt.Fprintln(w, "hits: — (the server reports no cached-token count)")
	}
	coldWhat, warmWhat := "requests that missed", "requests that hit"
	if r.By == "TTFT" {
		coldWhat, warmWhat = "the first round", "later rounds"
	}
	speed := interval(r.SpeedUp, r.SpeedUpLo, r.SpeedUpHi, "%.2f") + "×"
	if speed == "—×" {
		speed = "— (no request on one side)"
	}
	fmt.Fprintf(w, "median TTFT cold (%s) %s ms, warm (%s) %s ms; speed-up %s\n", coldWhat, interval(r.Cold, r.ColdLo, r.ColdHi, "%.1f"),
		warmWhat, interval(r.Warm, r.WarmLo, r.WarmHi, "%.1f"), speed)
	_, err := fmt.Fprintf(w, "shared system prompt (%d tokens): %s: %s\n", r.SystemTokens, r.Verdict, r.Why)
	return err
}

// interval writes "c [lo, hi]", "c" when the interval is unknown, "—"
// when c is.
func interval(c, lo, hi float64, f string) string {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return "—"
	}
	s := fmt.Sprintf(f, c)
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return s
	}
	return s + " [" + fmt.Sprintf(f, lo) + ", " + fmt.Sprintf(f, hi) + "]"
}
