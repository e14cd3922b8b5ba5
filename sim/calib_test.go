package sim

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"testing"
	"time"
)

// target is one figure published in seed 000 (2026-10-23) for the bench:
// ~800 input tokens, count-up, max_tokens 256, n streams released together.
type target struct {
	profile string
	n       int
	figure  string  // "per" (tok/s per stream), "agg" (tok/s), "ttft" (s)
	lo, hi  float64 // the published value, or range
}

var seedTargets = []target{
	{"llamacpp-rtx5090-q4km", 1, "per", 490, 490},
	{"llamacpp-rtx5090-q4km", 8, "agg", 880, 880},
	{"llamacpp-rtx5090-q4km", 16, "agg", 880, 880},
	{"llamacpp-rtx5090-q4km", 32, "agg", 880, 880},
	{"llamacpp-rtx5090-q4km", 32, "per", 39, 39},
	{"llamacpp-rtx5090-q4km", 32, "ttft", 2.6, 2.6},
	{"vllm-rtx5090-bf16", 1, "per", 323, 323},
	{"vllm-rtx5090-bf16", 1, "agg", 309, 309},
	{"vllm-rtx5090-bf16", 32, "per", 226, 254},
	{"vllm-rtx5090-bf16", 32, "agg", 5647, 5647},
	{"vllm-rtx5090-bf16", 32, "ttft", 0.3, 0.3},
	{"vllm-rtx5090-fp8", 1, "per", 390, 390},
	{"vllm-rtx5090-fp8", 32, "agg", 6073, 6073},
	{"mlx-m3ultra-4bit", 1, "per", 272, 272},
	{"mlx-m3ultra-4bit", 1, "agg", 244, 244},
	{"mlx-m3ultra-4bit", 16, "per", 87, 87},
	{"mlx-m3ultra-4bit", 16, "agg", 923, 923},
}

const tolerance = 0.10

// stagger separates the starts of the calibration's bursts.
const stagger = 250 * time.Millisecond

// rerunBudget bounds the time spent rerunning bursts that missed.
const rerunBudget = 30 * time.Second

func (f burstFigures) get(figure string) float64 {
	switch figure {
	case "per":
		return f.PerStream
	case "agg":
		return f.Aggregate
	default:
		return f.TTFT.Seconds()
	}
}

// within reports whether got is within tolerance of [lo, hi].
func within(got, lo, hi float64) bool {
	return got >= lo*(1-tolerance) && got <= hi*(1+tolerance)
}

// TestCalibrationModel runs the engine model on a virtual clock at the
// seed's full size and checks every published figure: the profiles'
// parameters are right before any real-time effect comes in.
func TestCalibrationModel(t *testing.T) {
	t.Parallel()
	for _, p := range Profiles() {
		if p.Instant {
			continue
		}
		for _, n := range []int{1, 4, 8, 16, 32} {
			f := modelBurst(p, n, 800, 256)
			t.Logf("%-22s n=%2d TTFT %6.3fs  per stream %6.1f  aggregate %7.1f tok/s", p.Name, n, f.TTFT.Seconds(), f.PerStream, f.Aggregate)
		}
	}
	for _, tg := range seedTargets {
		f := modelBurst(mustProfile(t, tg.profile), tg.n, 800, 256)
		if got := f.get(tg.figure); !within(got, tg.lo, tg.hi) {
			t.Errorf("%s n=%d %s: model gives %.3g, seed says %g–%g", tg.profile, tg.n, tg.figure, got, tg.lo, tg.hi)
		}
	}
}

// runBurst releases n streaming chat requests together against s, each
// with its own ~800-token prompt, and computes the seed bench's figures
// from what the client saw.
//
// disturbed reports that the engine's steps ended, in sum, more than 2% of
// the burst's duration late: the process did not get the CPU when it
// needed it, so the figures say nothing about the calibration. It also
// reports a burst whose requests reached the engine spread over more than
// the profile's batch window: they were not released together (the client
// goroutines did not get the CPU at once), so the model's burst is not
// what the server ran. CI once saw this for MLX n=16 under the race suite:
// TTFT 0.8–1.2 s against the model's 1.43 with aggregate on the model.
func runBurst(t *testing.T, s *Server, prompts []string, maxTokens int, tag string) (f burstFigures, disturbed bool) {
	n := len(prompts)
	c := newClient()
	defer c.CloseIdleConnections()
	release := make(chan struct{})
	res := make([]*result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			res[i] = do(context.Background(), c, s.URL(), "/v1/chat/completions", chatBody(prompts[i], maxTokens, true))
		}()
	}
	late0 := s.lateness()
	close(release)
	wg.Wait()
	late := s.lateness() - late0
	spread := s.arrivalSpread()
	if spread > s.cfg.Profile.BatchWindow {
		t.Logf("%s: requests reached the engine over %v, more than the batch window %v", tag, spread, s.cfg.Profile.BatchWindow)
	}
	ttft := make([]float64, n)
	rate := make([]float64, n)
	var firstSend, lastToken time.Time
	for i, r := range res {
		if r.err != nil || !r.done || r.chunks != maxTokens {
			t.Fatalf("%s stream %d: err %v, done %v, %d chunks", tag, i, r.err, r.done, r.chunks)
		}
		ttft[i] = r.first.Sub(r.sent).Seconds()
		rate[i] = float64(maxTokens-1) / r.last.Sub(r.first).Seconds()
		if firstSend.IsZero() || r.sent.Before(firstSend) {
			firstSend = r.sent
		}
		if r.last.After(lastToken) {
			lastToken = r.last
		}
	}
	span := lastToken.Sub(firstSend)
	return burstFigures{
		TTFT:      time.Duration(median(ttft) * float64(time.Second)),
		PerStream: median(rate),
		Aggregate: float64(n*maxTokens) / span.Seconds(),
	}, late > span/50 || spread > s.cfg.Profile.BatchWindow
}

// TestCalibrationServer measures the real server over HTTP with the
// seed's method. At reduced size (64 output tokens, always run) each
// figure must be within 10% of the engine model's prediction for that
// size; at full size (256 tokens, skipped with -short and under the race
// detector) within 10% of the seed's published figure. Every burst gets its own server, so all run at
// once.
//
// These are wall-clock figures judged at 10%: a measurement, which only a
// machine left to it can make. It runs when LLMREPLAY_CALIBRATE is set
// (.ci/run's calibration step, alone and without -race), as bench's
// TestCalibrationThroughBench does; a plain `go test ./...` keeps the
// model's calibration (TestCalibrationModel) and the server's tests that
// judge counters and the model, not the clock.
func TestCalibrationServer(t *testing.T) {
	if os.Getenv("LLMREPLAY_CALIBRATE") == "" {
		t.Skip("a wall-clock measurement: run alone with LLMREPLAY_CALIBRATE=1 go test -run Calibration ./sim/ (as .ci/run does)")
	}
	t.Parallel()
	type key struct {
		profile string
		n       int
	}
	bursts := map[key]bool{}
	for _, tg := range seedTargets {
		bursts[key{tg.profile, tg.n}] = true
	}
	sizes := []int{64}
	if !testing.Short() && !raceEnabled {
		sizes = append(sizes, 256)
	}
	// Every burst gets its own server and they overlap in time, but their
	// starts are staggered: a burst's start (dials, JSON, tokenizing 800
	// tokens per request) is the only CPU-heavy moment, and two starts at
	// once on a 2-core machine would delay each other's first tokens.
	type job struct {
		key
		maxTokens int
		model     burstFigures
	}
	var jobs []job
	for k := range bursts {
		for _, m := range sizes {
			jobs = append(jobs, job{k, m, modelBurst(mustProfile(t, k.profile), k.n, 800, m)})
		}
	}
	// Longest first, so the total time is about the longest burst.
	sort.Slice(jobs, func(i, j int) bool {
		di := float64(jobs[i].n*jobs[i].maxTokens) / jobs[i].model.Aggregate
		dj := float64(jobs[j].n*jobs[j].maxTokens) / jobs[j].model.Aggregate
		return di > dj
	})
	// One server with no modelled delay measures what the model leaves
	// out of TTFT: dial, HTTP, tokenizing the prompt, the first write and
	// the client's read, on this machine at this moment.
	fast := startServer(t, Config{Profile: mustProfile(t, "fast")})
	var mu sync.Mutex
	var all []measured
	var wg sync.WaitGroup
	start := time.Now()
	for i, jb := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := mustProfile(t, jb.profile)
			s := startServer(t, Config{Profile: p})
			tag := fmt.Sprintf("%s-%d-%d", jb.profile, jb.n, jb.maxTokens)
			prompts := make([]string, jb.n)
			for i := range prompts {
				prompts[i] = promptOfTokens(t, fmt.Sprintf("[%s stream %d]", tag, i), 800)
			}
			time.Sleep(time.Until(start.Add(time.Duration(i) * stagger)))
			got, disturbed := runBurst(t, s, prompts, jb.maxTokens, tag)
			path := pathOverhead(t, fast, prompts[0])
			mu.Lock()
			all = append(all, measured{jb.profile, jb.n, jb.maxTokens, got, jb.model, disturbed, path})
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The machine is shared: a burst that missed may have lost the CPU at
	// the wrong moment. Rerun those alone, one at a time, up to twice; a
	// real miscalibration misses every time.
	sort.Slice(all, func(i, j int) bool {
		return all[i].profile+fmt.Sprint(all[i].n, all[i].maxTokens) < all[j].profile+fmt.Sprint(all[j].n, all[j].maxTokens)
	})
	// Reruns get a time budget so a machine that stays busy cannot make
	// the test run for minutes; what is still off afterwards was measured
	// on a starved machine and is reported, not failed.
	rerunUntil := time.Now().Add(rerunBudget)
	for i := range all {
		for attempt := 0; attempt < 3 && len(misses(all[i])) > 0; attempt++ {
			if time.Now().After(rerunUntil) {
				all[i].disturbed = true
				break
			}
			m := &all[i]
			t.Logf("rerunning %s n=%d max_tokens=%d: %v", m.profile, m.n, m.maxTokens, misses(*m))
			s := startServer(t, Config{Profile: mustProfile(t, m.profile)})
			tag := fmt.Sprintf("%s-%d-%d-retry%d", m.profile, m.n, m.maxTokens, attempt)
			prompts := make([]string, m.n)
			for k := range prompts {
				prompts[k] = promptOfTokens(t, fmt.Sprintf("[%s stream %d]", tag, k), 800)
			}
			m.got, m.disturbed = runBurst(t, s, prompts, m.maxTokens, tag)
			m.path = pathOverhead(t, fast, prompts[0])
			s.Close()
		}
	}
	for _, m := range all {
		t.Logf("%-22s n=%2d max_tokens=%3d  TTFT %6.3fs (model %6.3f, path %5.1fms)  per stream %6.1f (%6.1f)  aggregate %7.1f (%7.1f)",
			m.profile, m.n, m.maxTokens, m.got.TTFT.Seconds(), m.want.TTFT.Seconds(), float64(m.path)/1e6, m.got.PerStream, m.want.PerStream, m.got.Aggregate, m.want.Aggregate)
		for _, miss := range misses(m) {
			if m.disturbed {
				t.Logf("not checked, the machine was too busy to keep time (engine steps ran late, or reruns out of time): %s", miss)
				continue
			}
			t.Error(miss)
		}
	}
}

type measured struct {
	profile   string
	n         int
	maxTokens int
	got, want burstFigures
	disturbed bool
	// path is the TTFT of the same prompt from a server with no modelled
	// delay, measured right after the burst: the part of the client's
	// TTFT that is the machine's, not the engine's.
	path time.Duration
}

// pathOverhead is the median TTFT of three single requests for prompt,
// each on a new connection as in a burst, to fast (the Instant profile).
// CI once failed vLLM n=1, where the model's TTFT is 53 ms, with 58–63 ms
// in three runs: a loaded race-enabled process spent 5–10 ms outside the
// engine, more than the 10% tolerance of so short a figure.
func pathOverhead(t *testing.T, fast *Server, prompt string) time.Duration {
	var d []float64
	for range 3 {
		c := newClient()
		r := do(context.Background(), c, fast.URL(), "/v1/chat/completions", chatBody(prompt, 1, true))
		c.CloseIdleConnections()
		if r.err != nil || !r.done || r.first.IsZero() {
			t.Fatalf("path overhead: err %v, done %v", r.err, r.done)
		}
		d = append(d, r.first.Sub(r.sent).Seconds())
	}
	return time.Duration(median(d) * float64(time.Second))
}

// misses lists the figures of m off by more than the tolerance: against
// the engine model at reduced size, against the seed at full size. A TTFT
// may also be longer by the machine's path overhead (m.path), never
// shorter.
func misses(m measured) []string {
	var out []string
	if m.maxTokens != 256 {
		for _, fig := range []string{"per", "agg", "ttft"} {
			got, want := m.got.get(fig), m.want.get(fig)
			judged := got
			if fig == "ttft" && got > want {
				judged = math.Max(want, got-m.path.Seconds())
			}
			if math.Abs(judged/want-1) > tolerance {
				out = append(out, fmt.Sprintf("%s n=%d max_tokens=%d %s: server %.3g (path %.3g), model %.3g", m.profile, m.n, m.maxTokens, fig, got, m.path.Seconds(), want))
			}
		}
		return out
	}
	for _, tg := range seedTargets {
		if tg.profile == m.profile && tg.n == m.n {
			got := m.got.get(tg.figure)
			judged := got
			if tg.figure == "ttft" && got > tg.hi {
				judged = math.Max(tg.hi, got-m.path.Seconds())
			}
			if !within(judged, tg.lo, tg.hi) {
				out = append(out, fmt.Sprintf("%s n=%d %s: server %.3g (path %.3g), seed says %g–%g", tg.profile, tg.n, tg.figure, got, m.path.Seconds(), tg.lo, tg.hi))
			}
		}
	}
	return out
}
