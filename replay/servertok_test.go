package replay

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload"
)

// tokServer is a chat server whose /tokenize speaks one family's shape and
// counts words (its "model's tokenizer"): fail makes it answer the probe
// and nothing after; flavour "" has no /tokenize at all.
type tokServer struct {
	chat    chatServer
	flavour string
	fail    bool
	asked   atomic.Int64
}

func (s *tokServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/tokenize" || s.flavour == "" {
		s.chat.ServeHTTP(w, r)
		return
	}
	s.asked.Add(1)
	var in map[string]any
	json.NewDecoder(r.Body).Decode(&in)
	key := map[string]string{"llamacpp": "content", "vllm": "prompt", "tgi": "inputs"}[s.flavour]
	text, ok := in[key].(string)
	if !ok {
		http.Error(w, `{"error":"missing field"}`, http.StatusUnprocessableEntity)
		return
	}
	if s.fail && text != probeText {
		http.Error(w, "tokenizer crashed", http.StatusInternalServerError)
		return
	}
	n := len(strings.Fields(text))
	ids := make([]int, n)
	switch s.flavour {
	case "llamacpp":
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
	case "vllm":
		json.NewEncoder(w).Encode(map[string]any{"tokens": ids, "count": n, "max_model_len": 4096})
	case "tgi":
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"id": i, "text": "w", "special": false}
		}
		json.NewEncoder(w).Encode(out)
	}
}

// TestServerTokenizeFlavoursAndFailures runs through the probe for each
// family's /tokenize shape, a server without one, one whose tokenizer
// fails after the probe, and --server-tokenize off: the counts land in the
// records, a failure is recorded as unavailable (−1), and the run's
// requests succeed either way.
func TestServerTokenizeFlavoursAndFailures(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	for _, tc := range []struct {
		name, flavour, setting string
		fail                   bool
		option                 string // the header's server_tokenize, by prefix
		asks                   bool
	}{
		{name: "llama.cpp", flavour: "llamacpp", option: "llamacpp", asks: true},
		{name: "vLLM", flavour: "vllm", option: "vllm", asks: true},
		{name: "TGI", flavour: "tgi", option: "tgi", asks: true},
		{name: "none", option: "unavailable: POST /tokenize did not answer (vllm: HTTP 404 Not Found; llamacpp: HTTP 404"},
		{name: "fails after the probe", flavour: "vllm", fail: true, option: "vllm", asks: true},
		{name: "off", flavour: "vllm", setting: ServerTokenizeOff, option: "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &tokServer{flavour: tc.flavour, fail: tc.fail}
			srv := httptest.NewServer(s)
			defer srv.Close()
			wl := handWorkload(workload.Phase{Name: "b", Kind: workload.KindBurst, Concurrency: 3, Requests: 3, MaxTokens: 4})
			cfg := baseConfig(t, wl, srv.URL)
			cfg.ServerTokenize = tc.setting
			sum, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if sum.OK != 3 {
				t.Fatalf("summary %s: counting must never fail a request", sum)
			}
			h, recs := readTrace(t, cfg.Trace)
			if got := h.Options["server_tokenize"]; !strings.HasPrefix(got, tc.option) {
				t.Errorf("server_tokenize %q, want %q…", got, tc.option)
			}
			if !tc.asks && s.asked.Load() > 0 && tc.setting == ServerTokenizeOff {
				t.Errorf("off asked /tokenize %d times", s.asked.Load())
			}
			for _, r := range recs {
				var wantPrompt, wantText int
				switch {
				case !tc.asks:
				case tc.fail:
					wantPrompt, wantText = trace.TokenizeUnavailable, trace.TokenizeUnavailable
				default:
					wantPrompt = words(promptText(&wl.Requests[r.Index]))
					wantText = words(receivedText(&r))
				}
				if r.ServerPromptTokens != wantPrompt || r.ServerTextTokens != wantText {
					t.Errorf("%s: server counts prompt %d text %d, want %d and %d", r.ID, r.ServerPromptTokens, r.ServerTextTokens, wantPrompt, wantText)
				}
			}
			if tc.fail && (sum.TextsUnavailable != 3 || sum.PromptsCounted != 0 || sum.PromptsDistinct != 3) {
				t.Errorf("summary: %d texts unavailable, %d of %d prompts", sum.TextsUnavailable, sum.PromptsCounted, sum.PromptsDistinct)
			}
		})
	}
}

// TestServerTokenizeSendsTheKey: a server that wants the API key for
// /tokenize (vLLM with --api-key guards it like every route) gets it.
func TestServerTokenizeSendsTheKey(t *testing.T) {
	s := &tokServer{flavour: "vllm"}
	var unauth atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" && r.Header.Get("Authorization") != "Bearer sk-tokenize-secret" {
			unauth.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "{}")
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	wl := handWorkload(workload.Phase{Name: "b", Kind: workload.KindBurst, Concurrency: 2, Requests: 2, MaxTokens: 4})
	cfg := baseConfig(t, wl, srv.URL)
	cfg.APIKey = "sk-tokenize-secret"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	h, recs := readTrace(t, cfg.Trace)
	if h.Options["server_tokenize"] != "vllm" || unauth.Load() != 0 {
		t.Errorf("server_tokenize %q, %d unauthorised asks", h.Options["server_tokenize"], unauth.Load())
	}
	for _, r := range recs {
		if r.ServerTextTokens <= 0 {
			t.Errorf("%s: no text count", r.ID)
		}
	}
}

// FuzzTokenizeReply feeds any bytes to each family's /tokenize reply
// parser through the client, as a server would send them: it must not
// panic, and a count it accepts is never negative or past int32 (the trace
// stores it as such, and the analysis bounds it again).
func FuzzTokenizeReply(f *testing.F) {
	for _, s := range []string{
		`{"tokens":[1,2,3]}`, `{"count":3,"tokens":[1,2,3],"max_model_len":4096}`,
		`[{"id":1,"text":"a","special":false},{"id":2,"text":"b","special":false}]`,
		`{"count":-5}`, `{"count":99999999999}`, `{"tokens":null}`, `<html>404</html>`, `[]`, `{}`,
	} {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, reply []byte) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(reply) }))
		defer srv.Close()
		flavours := []tokFlavour{tokLlama, tokVLLM, tokTGI}
		s := &serverTok{client: srv.Client(), url: srv.URL + "/tokenize", model: "m", scrub: func(s string) string { return s }, flav: flavours[int(which)%3]}
		n, err := s.count(context.Background(), "text", 5*time.Second)
		if err == nil && (n < 0 || n > 1<<31-1) {
			t.Fatalf("accepted count %d from %q", n, reply)
		}
		if err != nil && strings.Contains(err.Error(), string(reply)) && len(reply) > 64 {
			t.Fatalf("the error repeats the server's whole reply: %v", err)
		}
	})
}

// runTextTokenize replays one phase against a vLLM-flavoured server whose
// /tokenize counts the probe and the prompts at once but first hands every
// response's text to text, which answers whether to count it (false: the
// client gave up), with a per-record tokenize budget.
func runTextTokenize(t *testing.T, budget time.Duration, ph workload.Phase, text func(r *http.Request) bool) (*Summary, []trace.Record) {
	t.Helper()
	old, oldMemo := tokTextBudget, tokMemoBytes
	// The responses' texts are all alike: kept counts would answer all
	// but the first, and what is tested is each response's own ask.
	tokTextBudget, tokMemoBytes = budget, 0
	defer func() { tokTextBudget, tokMemoBytes = old, oldMemo }()
	s := &tokServer{flavour: "vllm"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" {
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), probeText) && !strings.Contains(string(b), "alpha beta") && !text(r) {
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(b)))
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	return runRead(t, baseConfig(t, handWorkload(ph), srv.URL))
}

// TestServerTokenizeGivesUpOnAHangingTokenizer: a /tokenize that answers
// the probe and the prompts, then hangs on every response's text, is asked
// at most tokGiveUp times in a row (plus what was in flight): the rest of
// the run's responses are recorded unavailable without asking, so the end
// of the run does not wait a timeout per response.
func TestServerTokenizeGivesUpOnAHangingTokenizer(t *testing.T) {
	var textAsks atomic.Int64
	sum, recs := runTextTokenize(t, 100*time.Millisecond, workload.Phase{Name: "c", Kind: workload.KindClosed, Concurrency: 1, Requests: 20, MaxTokens: 4},
		func(r *http.Request) bool {
			textAsks.Add(1)
			<-r.Context().Done() // hangs until the client gives up
			return false
		})
	// Each response is recorded unavailable (asked, or given up on) or, when
	// its budget ran out in the queue behind the hanging asks, not asked.
	if sum.OK != 20 || sum.TextsUnavailable < 1 || sum.TextsUnavailable+sum.TextsSkipped != 20 || sum.PromptsCounted != 20 {
		t.Errorf("summary %s: %d texts unavailable, %d not asked (want 20 together), %d prompts counted (want 20)", sum, sum.TextsUnavailable, sum.TextsSkipped, sum.PromptsCounted)
	}
	if n := textAsks.Load(); n > int64(tokGiveUp+tokTextConc) {
		t.Errorf("the hanging tokenizer was asked %d times: it should be given up after %d failures in a row", n, tokGiveUp)
	}
	for _, r := range recs {
		if (r.ServerTextTokens != trace.TokenizeUnavailable && r.ServerTextTokens != 0) || r.ServerPromptTokens <= 0 {
			t.Errorf("%s: server counts text %d (want −1 or 0), prompt %d", r.ID, r.ServerTextTokens, r.ServerPromptTokens)
		}
	}
}

// TestServerTokenizeSlowTokenizerHoldsNoRecordPastItsBudget: a /tokenize
// that takes 300 ms a count, 20 responses finishing together, a budget of
// 1 s per record: the first ones are counted, the rest are written without
// a count once their budget is spent (failed, or not asked), and every
// record reaches the trace.
func TestServerTokenizeSlowTokenizerHoldsNoRecordPastItsBudget(t *testing.T) {
	sum, recs := runTextTokenize(t, time.Second, workload.Phase{Name: "b", Kind: workload.KindBurst, Concurrency: 20, Requests: 20, MaxTokens: 4},
		func(r *http.Request) bool {
			select {
			case <-time.After(300 * time.Millisecond):
				return true
			case <-r.Context().Done():
				return false
			}
		})
	if sum.OK != 20 || sum.TextsCounted < 2 || sum.TextsCounted+sum.TextsUnavailable+sum.TextsSkipped != 20 || sum.TextsCounted == 20 {
		t.Errorf("summary %s: texts counted %d, unavailable %d, skipped %d", sum, sum.TextsCounted, sum.TextsUnavailable, sum.TextsSkipped)
	}
	if len(recs) != 20 {
		t.Fatalf("%d records in the trace, want 20", len(recs))
	}
	t.Logf("%s", sum.TokenizeLine())
}

// TestServerTokenizeAsksEachTextOnce: responses with the same text (every
// count-up answer of one length) are counted by the server once, or once
// per text-count worker that asked before the first answer came; each
// record still gets the count.
func TestServerTokenizeAsksEachTextOnce(t *testing.T) {
	s := &tokServer{flavour: "vllm"}
	ts := httptest.NewServer(s)
	defer ts.Close()
	const n = 12
	wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: n, Requests: n})
	cfg := baseConfig(t, wl, ts.URL)
	cfg.Model, cfg.ServerTokenize = "m", ServerTokenizeAuto
	sum, recs := runRead(t, cfg)
	if sum.OK != n || sum.TextsCounted != n || sum.PromptsCounted != n {
		t.Fatalf("summary %q: %d texts counted, %d prompts", sum, sum.TextsCounted, sum.PromptsCounted)
	}
	texts := map[string]bool{}
	for _, r := range recs {
		texts[receivedText(&r)] = true
		if want := len(strings.Fields(receivedText(&r))); r.ServerTextTokens != want {
			t.Errorf("%s: text count %d, want %d", r.ID, r.ServerTextTokens, want)
		}
	}
	// The probe, one per distinct prompt, and per distinct text at most
	// one per worker.
	if asked, most := s.asked.Load(), int64(1+n+len(texts)*tokTextConc); asked > most {
		t.Errorf("/tokenize asked %d times for %d prompts and %d distinct texts, want at most %d", asked, n, len(texts), most)
	}
}
