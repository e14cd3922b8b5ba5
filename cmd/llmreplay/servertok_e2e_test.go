package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/workload/tokenize"
)

// thaiWords are one token each in thaiServer's vocabulary (as Qwen3's
// vocabulary has many Thai words) and several under o200k: the workload's
// default tokenizer, counting the chunks, finds more tokens than the model
// made.
var thaiWords = []string{"สวัสดี", "ขอบคุณ", "ประเทศไทย", "ภาษา", "อาหาร", "กรุงเทพ"}

// thaiServer is an OpenAI-compatible chat server whose model streams one
// Thai word per chunk and reports usage (times usageFactor: 1 is honest),
// with a vLLM-shaped /tokenize (when tokenize is set) that counts in its
// vocabulary: a Thai word is one token, the rest is counted as o200k does
// (so the workload's English prompts count the same, plus promptExtra).
type thaiServer struct {
	o200k       tokenize.Tokenizer
	usageFactor int
	tokenize    bool
	promptExtra int
}

func (s *thaiServer) count(text string) int {
	n := 0
	for _, w := range thaiWords {
		n += strings.Count(text, w)
		text = strings.ReplaceAll(text, w, "")
	}
	return n + s.o200k.Count(text)
}

func (s *thaiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"thai-model","object":"model"}]}`)
	case "/tokenize":
		if !s.tokenize {
			http.NotFound(w, r)
			return
		}
		var in struct {
			Prompt *string `json:"prompt"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Prompt == nil {
			http.Error(w, `{"error":"prompt is required"}`, http.StatusBadRequest)
			return
		}
		n := s.count(*in.Prompt)
		if *in.Prompt != "Hello world" && !strings.ContainsAny(*in.Prompt, "กขคงจฉชซญดตถทธนบปผพฟภมยรลวศสหอฮ") {
			n += s.promptExtra // a prompt, not received text
		}
		json.NewEncoder(w).Encode(map[string]any{"count": n, "tokens": make([]int, n), "max_model_len": 32768})
	case "/v1/chat/completions":
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := 0; i < req.MaxTokens; i++ {
			fin := "null"
			if i == req.MaxTokens-1 {
				fin = `"length"`
			}
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", thaiWords[i%len(thaiWords)], fin)
			fl.Flush()
		}
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":70,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", req.MaxTokens*s.usageFactor, 70+req.MaxTokens*s.usageFactor)
		io.WriteString(w, "data: [DONE]\n\n")
	default:
		http.NotFound(w, r)
	}
}

// TestServerTokenizerJudgesUsage is a case met in the field, through the
// built binary with default flags: a model whose one-token chunks are
// several o200k tokens each (a llama.cpp server with Qwen3's vocabulary
// streamed Thai, and bench flagged usage_mismatch at every concurrency). An
// honest server streams one token per event, so its stream backs its count
// (judged "stream") and it passes, with /tokenize or without; a server that
// doubles its usage is not backed by its stream and is judged by its own
// /tokenize or by bounds, and flagged either way; a server whose tokenizer
// counts the prompts 40 tokens longer than the workload gets
// prompt_not_exact.
func TestServerTokenizerJudgesUsage(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	o200k, err := tokenize.Load("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	wl := buildWorkload(t, bin, dir, "--max-tokens", "24", "--schedule", "burst:2", "--repeats", "1")
	for _, c := range []struct {
		name        string
		args        []string
		srv         thaiServer
		judgement   string
		mismatch    bool
		promptWrong bool
	}{
		{name: "honest with tokenize", srv: thaiServer{usageFactor: 1, tokenize: true}, judgement: "stream"},
		{name: "honest without tokenize", srv: thaiServer{usageFactor: 1}, judgement: "stream"},
		{name: "overstating with tokenize", srv: thaiServer{usageFactor: 2, tokenize: true}, judgement: "server-tokenizer", mismatch: true},
		// Without /tokenize only bounds judge, and for Thai (3 bytes a
		// character) one token per byte is loose: the 24 words are
		// 4 × (18+18+27+12+15+21) = 444 bytes, so at most 447 tokens. A
		// doubled count (48) passes; twenty times (480) does not.
		{name: "overstating twentyfold without tokenize", srv: thaiServer{usageFactor: 20}, judgement: "bounds", mismatch: true},
		{name: "off", args: []string{"--server-tokenize", "off"}, srv: thaiServer{usageFactor: 1, tokenize: true}, judgement: "stream"},
		{name: "prompts counted differently", srv: thaiServer{usageFactor: 1, tokenize: true, promptExtra: 40}, judgement: "stream", promptWrong: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // independent: a server and a folder of its own
			c.srv.o200k = o200k
			ts := httptest.NewServer(&c.srv)
			defer ts.Close()
			tr := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".trace.zst")
			_, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", ts.URL, "-o", tr}, c.args...)...)
			if code != 0 {
				t.Fatalf("replay: %d %s", code, e)
			}
			asked := c.srv.tokenize && c.args == nil // the only args are --server-tokenize off
			wantLine := "server tokenizer: vllm /tokenize counted 2 of 2 distinct prompts and 2 responses"
			switch {
			case c.args != nil:
				wantLine = "server tokenizer: off"
			case !c.srv.tokenize:
				wantLine = "server tokenizer: none (POST /tokenize did not answer"
			}
			if !strings.Contains(e, wantLine) {
				t.Errorf("replay does not say what came of the server's tokenizer (%q):\n%s", wantLine, e)
			}
			// The trace holds the server's counts: 24 Thai words are 24
			// tokens to the model; o200k, chunk by chunk, makes more of
			// them, which is what used to raise usage_mismatch.
			r, err := trace.Open(tr)
			if err != nil {
				t.Fatal(err)
			}
			for r.Scan() {
				rec := r.Record()
				o := 0
				for _, ch := range rec.Chunks {
					o += o200k.Count(ch.Text)
				}
				if o <= 24*102/100 {
					t.Errorf("%s: o200k counts %d tokens: the test needs a text o200k overcounts", rec.ID, o)
				}
				wantText, wantPrompt := 24, rec.InputTokens+c.srv.promptExtra
				if !asked {
					wantText, wantPrompt = 0, 0
				}
				if rec.ServerTextTokens != wantText || rec.ServerPromptTokens != wantPrompt {
					t.Errorf("%s: server counts text %d prompt %d, want %d and %d", rec.ID, rec.ServerTextTokens, rec.ServerPromptTokens, wantText, wantPrompt)
				}
			}
			r.Close()
			if info, _, _ := run(t, nil, bin, "trace", "info", tr); asked && !strings.Contains(info, "tokenize:   the server's /tokenize: vllm, prompts counted: 2 of 2") {
				t.Errorf("trace info does not say what the server's tokenizer counted:\n%s", info)
			}
			if c.name == "honest with tokenize" {
				// export carries the counts for DuckDB and pandas users.
				rows := exportedRequests(t, bin, tr)
				if len(rows) != 2 {
					t.Fatalf("requests.csv: %d rows, want 2", len(rows))
				}
				// The server's /tokenize counts the text the workload wrote,
				// as new_input_tokens does (this server counts English as
				// o200k does); input_tokens is the whole prompt as the
				// server's usage counts it, chat template included (70).
				for _, row := range rows {
					if row["server_text_tokens"] != "24" || row["server_new_input_tokens"] != row["new_input_tokens"] || row["input_tokens"] != "70" {
						t.Errorf("requests.csv row: server_text_tokens %q (want 24), server_new_input_tokens %q (want new_input_tokens %q), input_tokens %q (want the usage's 70)",
							row["server_text_tokens"], row["server_new_input_tokens"], row["new_input_tokens"], row["input_tokens"])
					}
				}
			}
			var doc analyzeDoc
			analyzeJSON(t, bin, &doc, tr)
			if got := doc.Traces[0].UsageChecks; got[c.judgement] != 2 || len(got) != 1 {
				t.Errorf("usage_checks %v, want {%s: 2}", got, c.judgement)
			}
			var mismatch, prompt bool
			for _, w := range doc.Warnings {
				switch w.Code {
				case "usage_mismatch":
					mismatch = true
					if w.Evidence["judgement"] != c.judgement {
						t.Errorf("usage_mismatch judged by %v, want %s: %s", w.Evidence["judgement"], c.judgement, w.Message)
					}
				case "prompt_not_exact":
					prompt = true
				}
			}
			if mismatch != c.mismatch || prompt != c.promptWrong {
				t.Errorf("usage_mismatch %v (want %v), prompt_not_exact %v (want %v): %+v", mismatch, c.mismatch, prompt, c.promptWrong, doc.Warnings)
			}
		})
	}
}

// TestServerTokenizeBadValue: a --server-tokenize the engine does not know
// is refused before anything is sent, naming the flag and the fix.
func TestServerTokenizeBadValue(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	tr := filepath.Join(dir, "x.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", "http://127.0.0.1:9", "--server-tokenize", "maybe", "-o", tr)
	if code != 2 || !strings.Contains(e, "--server-tokenize") || !strings.Contains(e, "auto or off") {
		t.Errorf("exit %d, stderr %q: want 2 and a message naming --server-tokenize with its values", code, e)
	}
}

// TestBenchAsksServerTokenizer: bench with default flags against its
// simulator asks the simulator's /tokenize (vLLM's shape first, for the
// default openai-chat API), says so and records the counts; the analysis
// finds the count-up's usage backed by its one-token events: no
// usage_mismatch, every response judged stream.
func TestBenchAsksServerTokenizer(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	res := filepath.Join(dir, "res")
	_, e, code := run(t, nil, bin, "bench", "--concurrency", "1,2", "--input-tokens", "64", "--max-tokens", "8", "--repeats", "1", "--results", res)
	if code != 0 {
		t.Fatalf("bench: %d %s", code, e)
	}
	if !strings.Contains(e, "server tokenizer: vllm /tokenize counted 3 of 3 distinct prompts and 3 responses") {
		t.Errorf("bench does not say what its server's tokenizer counted:\n%s", e)
	}
	traces, _ := filepath.Glob(filepath.Join(res, "*.trace.zst"))
	if len(traces) != 1 {
		t.Fatalf("traces under %s: %v", res, traces)
	}
	r, err := trace.Open(traces[0])
	if err != nil {
		t.Fatal(err)
	}
	for r.Scan() {
		if rec := r.Record(); rec.ServerTextTokens != 8 || rec.ServerPromptTokens != rec.InputTokens {
			t.Errorf("%s: server counts text %d (want 8), prompt %d (want %d)", rec.ID, rec.ServerTextTokens, rec.ServerPromptTokens, rec.InputTokens)
		}
	}
	r.Close()
	out, _ := mustRun(t, bin, "analyze", traces[0], "--format", "json")
	if strings.Contains(out, `"usage_mismatch"`) || !strings.Contains(out, `"usage_checks": {`) || !strings.Contains(out, `"stream": 3`) {
		t.Errorf("analysis of an honest count-up: want no usage_mismatch and 3 responses judged stream:\n%s", out)
	}
}

// TestInflatedUsageCaughtEitherWay: the simulator's --inflate-usage (ten
// times the tokens it sent) is caught with its /tokenize asked (judged
// server-tokenizer: 160 against 16) and with --server-tokenize off (judged
// by bounds: 160 tokens claimed for a count-up of 16 tokens, "1, 2, … 8,"
// about 2 bytes a token, far past one token per byte).
func TestInflatedUsageCaughtEitherWay(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "16", "--schedule", "burst:2", "--repeats", "1")
	url := startSim(t, bin, "--profile", "fast", "--inflate-usage")
	for _, c := range []struct {
		args      []string
		judgement string
	}{{nil, "server-tokenizer"}, {[]string{"--server-tokenize", "off"}, "bounds"}} {
		tr := filepath.Join(dir, c.judgement+".trace.zst")
		if _, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", url, "-o", tr}, c.args...)...); code != 0 {
			t.Fatalf("replay: %d %s", code, e)
		}
		var doc analyzeDoc
		out := analyzeJSON(t, bin, &doc, tr)
		found := false
		for _, w := range doc.Warnings {
			if w.Code == "usage_mismatch" {
				found = true
				if w.Evidence["judgement"] != c.judgement || w.Evidence["n_requests"] != 2.0 {
					t.Errorf("usage_mismatch evidence %v, want judgement %s over 2 requests", w.Evidence, c.judgement)
				}
			}
		}
		if !found {
			t.Errorf("%v: inflated usage not flagged: %s", c.args, out)
		}
	}
}

// TestSimulatorWithQwen3Vocabulary: a real model vocabulary through the
// binary with default flags. The simulator runs with Qwen3's
// tokenizer.json, the workload with the default o200k_base. The count-up's
// usage is Qwen3's and matches its one-token events: every response is
// judged stream, none mismatches; the simulator's /tokenize counts in
// Qwen3; each prompt's
// Qwen3 count is recorded beside the workload's o200k count, and
// prompt_not_exact appears exactly when one differs by more than 2 (the
// workload's filler words are one token in both vocabularies, so here the
// counts agree: 64 and 64).
func TestSimulatorWithQwen3Vocabulary(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	qwenPath, err := filepath.Abs("../../workload/tokenize/testdata/qwen3/tokenizer.json.zst")
	if err != nil {
		t.Fatal(err)
	}
	qwen, err := tokenize.Load(qwenPath)
	if err != nil {
		t.Fatal(err)
	}
	wl := buildWorkload(t, bin, dir, "--max-tokens", "64", "--schedule", "burst:2", "--repeats", "1")
	url := startSim(t, bin, "--profile", "fast", "--tokenizer", qwenPath)
	tr := filepath.Join(dir, "qwen.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", url, "-o", tr)
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	for r.Scan() {
		rec := r.Record()
		text := ""
		for _, c := range rec.Chunks {
			text += c.Text
		}
		if rec.ServerTextTokens != qwen.Count(text) || rec.ServerTextTokens < 64 {
			t.Errorf("%s: server text count %d, Qwen3 counts %d", rec.ID, rec.ServerTextTokens, qwen.Count(text))
		}
		if rec.ServerPromptTokens <= 0 {
			t.Errorf("%s: no server prompt count", rec.ID)
		}
		d := rec.ServerPromptTokens - rec.InputTokens
		off = off || d > 2 || d < -2
		t.Logf("%s: prompt %d tokens under o200k, %d under Qwen3", rec.ID, rec.InputTokens, rec.ServerPromptTokens)
	}
	r.Close()
	var doc analyzeDoc
	analyzeJSON(t, bin, &doc, tr)
	if doc.Traces[0].UsageChecks["stream"] != 2 {
		t.Errorf("usage_checks %v, want stream 2", doc.Traces[0].UsageChecks)
	}
	codes := map[string]bool{}
	for _, w := range doc.Warnings {
		codes[w.Code] = true
	}
	if codes["usage_mismatch"] || codes["prompt_not_exact"] != off {
		t.Errorf("warnings %v: want no usage_mismatch, and prompt_not_exact %v", codes, off)
	}
}
