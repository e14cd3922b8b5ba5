package replay_test

// These tests put the whole pipeline together: a workload built by the
// workload package, replayed by the engine against the simulator, read
// back from the trace and, where the point is what the analysis makes of
// it, analyzed. They are the simulator issue's "each API round-trips
// through the replay engine; each fault mode produces the error class or
// anomaly it should; the prefix cache shortens the second TTFT".

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/replay"
	"github.com/llmreplay/llmreplay/replay/endpoint"
	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

func startSim(t *testing.T, profile string, mod func(*sim.Config)) *sim.Server {
	t.Helper()
	p, err := sim.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Profile: p}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func build(t *testing.T, shape workload.Shape, schedule string, maxTokens int, prefix string) *workload.Workload {
	t.Helper()
	return mustBuild(t, workload.BuildConfig{
		Shape: shape, InputTokens: []int{200}, MaxTokens: maxTokens,
		Schedule: schedule, Repeats: 1, Prefix: prefix, Seed: 3,
	})
}

// mustBuild is the workload cfg builds; the test fails if it cannot.
func mustBuild(t *testing.T, cfg workload.BuildConfig) *workload.Workload {
	t.Helper()
	wl, err := workload.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func run(t *testing.T, wl *workload.Workload, url, api string, mod func(*replay.Config)) (*replay.Summary, trace.Header, []trace.Record, string) {
	t.Helper()
	cfg := replay.Config{
		Workload: wl, URL: url, API: api, Label: api,
		Trace: filepath.Join(t.TempDir(), "run.trace.zst"),
		Salt:  true, SaltSeed: 11, Prewarm: true,
		Timeout: 30 * time.Second, IdleTimeout: 5 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	sum, err := replay.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(cfg.Trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []trace.Record
	for r.Scan() {
		recs = append(recs, *r.Record().Clone())
	}
	if r.Err() != nil || r.Truncated() {
		t.Fatalf("trace: err %v truncated %v", r.Err(), r.Truncated())
	}
	return sum, r.Header(), recs, cfg.Trace
}

func text(r trace.Record) string {
	var b strings.Builder
	for _, c := range r.Chunks {
		b.WriteString(c.Text)
	}
	return b.String()
}

func TestEverySimAPIRoundTrips(t *testing.T) {
	srv := startSim(t, "fast", nil)
	for _, api := range endpoint.Names {
		t.Run(api, func(t *testing.T) {
			shape := workload.ShapeChat
			switch api {
			case "openai-completions", "llamacpp", "ollama-generate", "tgi", "sglang", "trtllm":
				shape = workload.ShapeCompletion
			}
			var mod func(*replay.Config)
			if api == "trtllm" {
				mod = func(c *replay.Config) { c.Model = "ensemble" } // Triton's route names the model
			}
			wl := build(t, shape, "burst:1,3", 24, "unique")
			sum, h, recs, _ := run(t, wl, srv.URL(), api, mod)
			if sum.OK != 4 || sum.Failed != 0 {
				t.Fatalf("summary: %s", sum)
			}
			if want := map[string]string{"llamacpp": "llamacpp", "tgi": "tgi"}[api]; h.Options["server_tokenize"] != want && (want != "" || h.Options["server_tokenize"] != "vllm") {
				t.Errorf("server_tokenize %q: the probe should try the API's own family first", h.Options["server_tokenize"])
			}
			if sum.PromptsCounted != 4 || sum.PromptsDistinct != 4 || sum.TextsCounted != 4 {
				t.Errorf("server tokenizer: %d of %d prompts, %d texts counted", sum.PromptsCounted, sum.PromptsDistinct, sum.TextsCounted)
			}
			if h.API != api || h.WorkloadDigest != workload.Digest(wl) || h.Reference == "" {
				t.Errorf("header: api %q digest %q reference %q", h.API, h.WorkloadDigest, h.Reference)
			}
			for _, r := range recs {
				got := text(r)
				if !strings.HasPrefix(h.Reference, got) || !strings.HasPrefix(got, "1,") {
					t.Errorf("%s: text %q is not the start of the count-up %q", r.ID, got, h.Reference[:min(40, len(h.Reference))])
				}
				if len(r.Chunks) < 24 {
					t.Errorf("%s: %d chunks, want one per token (24)", r.ID, len(r.Chunks))
				}
				if r.FinishReason == "" {
					t.Errorf("%s: no finish reason", r.ID)
				}
				if r.Usage == "" && r.Timings == "" && api != "trtllm" { // Triton's stream carries no counts
					t.Errorf("%s: neither usage nor timings kept", r.ID)
				}
				// The simulator tokenizes with the workload's tokenizer, so
				// its own counts are the workload's exactly: the prompt's
				// InputTokens, and one token per count-up chunk.
				if r.ServerPromptTokens != r.InputTokens || r.ServerTextTokens != 24 {
					t.Errorf("%s: server tokenizer counted prompt %d (want %d), text %d (want 24)", r.ID, r.ServerPromptTokens, r.InputTokens, r.ServerTextTokens)
				}
			}
		})
	}
}

// analyzed replays wl against a simulator with the given fault and returns
// the records and the analysis warnings by code.
func analyzed(t *testing.T, mod func(*sim.Config), wl *workload.Workload) (*replay.Summary, []trace.Record, map[string]bool) {
	srv := startSim(t, "fast", mod)
	sum, _, recs, path := run(t, wl, srv.URL(), "openai-chat", func(c *replay.Config) { c.IdleTimeout = 300 * time.Millisecond })
	res, err := analyze.AnalyzeFiles(analyze.Options{}, analyze.Input{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, w := range analyze.AllWarnings(res, nil) {
		codes[w.Code] = true
	}
	return sum, recs, codes
}

func TestEachSimFaultShowsUp(t *testing.T) {
	cases := []struct {
		name    string
		fault   func(*sim.Config)
		class   trace.ErrorClass // expected error class of every request, or ""
		warning string           // expected analysis warning, or ""
		check   func(*testing.T, []trace.Record)
	}{
		{name: "max-context", fault: func(c *sim.Config) { c.MaxContext = 100 }, class: trace.ErrHTTPStatus,
			check: func(t *testing.T, recs []trace.Record) {
				if recs[0].Status != 400 || !strings.Contains(recs[0].Error.Body, "context") {
					t.Errorf("status %d body %q: want 400 explaining the context limit", recs[0].Status, recs[0].Error.Body)
				}
			}},
		{name: "no-stream", fault: func(c *sim.Config) { c.NoStream = true }, warning: analyze.WarnNotStreamed,
			check: func(t *testing.T, recs []trace.Record) {
				for _, r := range recs {
					// The role-only delta and the usage are chunks without text.
					text := 0
					for _, c := range r.Chunks {
						if c.Text != "" {
							text++
						}
					}
					if text != 1 || r.FinishReason != "length" {
						t.Errorf("%s: %d chunks with text, finish %q: want the whole answer at once", r.ID, text, r.FinishReason)
					}
				}
			}},
		{name: "tokens-per-chunk", fault: func(c *sim.Config) { c.TokensPerChunk = 4 },
			check: func(t *testing.T, recs []trace.Record) {
				for _, r := range recs {
					if n := len(r.Chunks); n > 24/4+2 {
						t.Errorf("%s: %d chunks for 24 tokens at 4 per chunk", r.ID, n)
					}
				}
			}},
		{name: "drop-usage", fault: func(c *sim.Config) { c.DropUsage = true },
			check: func(t *testing.T, recs []trace.Record) {
				for _, r := range recs {
					if r.Usage != "" {
						t.Errorf("%s: usage %q kept though the server sent none", r.ID, r.Usage)
					}
				}
			}},
		{name: "inflate-usage", fault: func(c *sim.Config) { c.InflateUsage = 10 }, warning: analyze.WarnUsageMismatch},
		{name: "stall-after", fault: func(c *sim.Config) { c.StallAfter = 5 }, class: trace.ErrIdleTimeout},
		{name: "reset-after", fault: func(c *sim.Config) { c.ResetAfter = 5 }, class: trace.ErrReset,
			check: func(t *testing.T, recs []trace.Record) {
				for _, r := range recs {
					if len(r.Chunks) == 0 || r.Status != 200 {
						t.Errorf("%s: %d chunks, status %d: want what came before the reset kept", r.ID, len(r.Chunks), r.Status)
					}
				}
			}},
		{name: "error-rate", fault: func(c *sim.Config) { c.ErrorRate = 1 }, class: trace.ErrHTTPStatus,
			check: func(t *testing.T, recs []trace.Record) {
				if recs[0].Status != 500 || recs[0].Error.Body == "" {
					t.Errorf("status %d body %q, want 500 with the server's explanation", recs[0].Status, recs[0].Error.Body)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wl := build(t, workload.ShapeChat, "burst:2", 24, "unique")
			sum, recs, warnings := analyzed(t, c.fault, wl)
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2", len(recs))
			}
			for _, r := range recs {
				switch {
				case c.class == "" && r.Error != nil:
					t.Errorf("%s failed: %+v", r.ID, r.Error)
				case c.class != "" && (r.Error == nil || r.Error.Class != c.class):
					t.Errorf("%s: error %+v, want class %s", r.ID, r.Error, c.class)
				}
			}
			if c.class != "" && sum.ByClass[c.class] != 2 {
				t.Errorf("summary %s does not count 2 %s failures", sum, c.class)
			}
			if c.warning != "" && !warnings[c.warning] {
				t.Errorf("analysis warnings %v lack %s", warnings, c.warning)
			}
			if c.check != nil {
				c.check(t, recs)
			}
		})
	}
}

// The seeds' prefix-cache test: the same prompt twice → the second is a
// hit and its TTFT is shorter. Salt off so the prompts really are equal.
// llama.cpp's API says how many prompt tokens came from the cache
// (timings.cache_n), so the hit is checked directly and not only by time,
// which a loaded machine blurs.
func TestPrefixCacheShortensSecondTTFT(t *testing.T) {
	srv := startSim(t, "vllm-rtx5090-bf16", nil)
	wl := mustBuild(t, workload.BuildConfig{
		Shape: workload.ShapeCompletion, InputTokens: []int{8000}, MaxTokens: 4,
		Schedule: "burst:1", Repeats: 2, Prefix: "shared", Seed: 5,
	})
	_, _, recs, _ := run(t, wl, srv.URL(), "llamacpp", func(c *replay.Config) { c.Salt = false })
	if len(recs) != 2 || recs[0].Error != nil || recs[1].Error != nil {
		t.Fatalf("records: %+v", recs)
	}
	cacheN := func(r trace.Record) int {
		var tm struct {
			CacheN int `json:"cache_n"`
		}
		if err := json.Unmarshal([]byte(r.Timings), &tm); err != nil {
			t.Fatalf("%s: timings %q: %v", r.ID, r.Timings, err)
		}
		return tm.CacheN
	}
	if a, b := cacheN(recs[0]), cacheN(recs[1]); a != 0 || b < 7900 {
		t.Errorf("cache_n %d then %d: want a miss, then a hit on (nearly) all 8000 prompt tokens", a, b)
	}
	// 8000 uncached prompt tokens cost the profile ~140 ms of prefill; the
	// hit skips it.
	ttft := func(r trace.Record) int64 { return r.Chunks[0].T - r.Sent }
	if first, second := ttft(recs[0]), ttft(recs[1]); second >= first {
		t.Errorf("TTFT %v then %v: the repeated prompt should be faster", time.Duration(first), time.Duration(second))
	}
}
