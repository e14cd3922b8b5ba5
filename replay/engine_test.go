package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/llmreplay/llmreplay/trace"
	"github.com/llmreplay/llmreplay/trace/tracetest"
	"github.com/llmreplay/llmreplay/workload"
)

// handWorkload is a small workload made by hand, independent of the
// builder: phases of the given kinds, each with n requests.
func handWorkload(phases ...workload.Phase) *workload.Workload {
	wl := &workload.Workload{Header: workload.Header{
		Format: workload.FormatName, Major: workload.FormatMajor, Minor: workload.FormatMinor,
		Tokenizer: "o200k_base", Shape: workload.ShapeChat, Seed: 1,
		Task: workload.Task{Kind: "count-up", Reference: "1, 2, 3, 4, 5, 6, 7, 8"},
	}}
	idx := 0
	for pi, ph := range phases {
		ph.Index = pi
		wl.Header.Phases = append(wl.Header.Phases, ph)
		for i := 0; i < ph.Requests; i++ {
			r := workload.Request{
				ID: fmt.Sprintf("p%03d-%04d", pi, i), Index: idx, Phase: pi,
				Messages:    []workload.Message{{Role: "user", Content: fmt.Sprintf("alpha beta gamma delta request %d count up from 1", idx)}},
				InputTokens: 10, MaxTokens: 4, IgnoreEOS: true, Slot: i,
			}
			if ph.Kind == workload.KindRate {
				r.Offset = int64(i) * int64(time.Millisecond) * 5
			}
			wl.Requests = append(wl.Requests, r)
			idx++
		}
	}
	wl.Header.Requests = idx
	return wl
}

// chatServer is an OpenAI-compatible chat server that streams tokens
// "1", ",", " 2" … with the given gap, and remembers what it was sent.
type chatServer struct {
	gap       time.Duration
	onRequest func() // called as each chat request arrives
	mu        sync.Mutex
	arrivals  []time.Time
	bodies    []string
	auth      []string
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		io.WriteString(w, `{"object":"list","data":[{"id":"test-model","object":"model"}]}`)
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	b, _ := io.ReadAll(r.Body)
	if s.onRequest != nil {
		s.onRequest()
	}
	s.mu.Lock()
	s.arrivals = append(s.arrivals, time.Now())
	s.bodies = append(s.bodies, string(b))
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	var req struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(b, &req)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n")
	fl.Flush()
	toks := []string{"1", ",", " 2", ",", " 3", ",", " 4", ",", " 5"}
	for i := 0; i < req.MaxTokens; i++ {
		time.Sleep(s.gap)
		fin := "null"
		if i == req.MaxTokens-1 {
			fin = `"length"`
		}
		fmt.Fprintf(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n", toks[i%len(toks)], fin)
		fl.Flush()
	}
	fmt.Fprintf(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":17,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", req.MaxTokens, 17+req.MaxTokens)
	io.WriteString(w, "data: [DONE]\n\n")
}

// readTrace returns the header and records of a trace that a clean run
// closed (not truncated).
func readTrace(t *testing.T, path string) (trace.Header, []trace.Record) {
	t.Helper()
	f := tracetest.Read(t, path)
	if f.Truncated {
		t.Fatal("trace truncated after a clean run")
	}
	return f.Header, f.Records
}

func baseConfig(t *testing.T, wl *workload.Workload, url string) Config {
	return Config{
		Workload: wl, URL: url, API: "openai-chat", Label: "test",
		Trace: filepath.Join(t.TempDir(), "run.trace.zst"), Salt: true, SaltSeed: 7,
		IdleTimeout: 5 * time.Second, Timeout: 30 * time.Second,
	}
}

func TestBurstReleasesTogetherAndPhasesRunInOrder(t *testing.T) {
	srv := &chatServer{gap: 2 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	wl := handWorkload(
		workload.Phase{Kind: workload.KindBurst, Concurrency: 1, Requests: 1},
		workload.Phase{Kind: workload.KindBurst, Concurrency: 4, Requests: 4},
		workload.Phase{Kind: workload.KindBurst, Concurrency: 8, Requests: 8},
	)
	cfg := baseConfig(t, wl, ts.URL)
	cfg.Prewarm = true
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 13 || sum.OK != 13 || sum.Failed != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Model != "test-model" {
		t.Errorf("model discovered as %q, want test-model", sum.Model)
	}
	h, recs := readTrace(t, cfg.Trace)
	if h.Model != "test-model" || h.Label != "test" || len(h.Phases) != 3 || h.API != "openai-chat" {
		t.Errorf("header: %+v", h)
	}
	if len(recs) != 13 {
		t.Fatalf("%d records, want 13", len(recs))
	}
	sched := map[int]int64{}
	lastDone := map[int]int64{}
	firstSent := map[int]int64{}
	for _, r := range recs {
		if r.Error != nil {
			t.Fatalf("record %s failed: %+v", r.ID, r.Error)
		}
		if len(r.Chunks) < 4 {
			t.Fatalf("record %s has %d chunks, want ≥ 4 text chunks", r.ID, len(r.Chunks))
		}
		if r.Sent < r.Scheduled || r.Headers < r.Sent || r.Done < r.Headers {
			t.Errorf("record %s times out of order: %d %d %d %d", r.ID, r.Scheduled, r.Sent, r.Headers, r.Done)
		}
		// Every request of a burst has the same scheduled (release) time.
		if s, ok := sched[r.Phase]; ok && s != r.Scheduled {
			t.Errorf("phase %d: scheduled %d and %d differ within one burst", r.Phase, s, r.Scheduled)
		}
		sched[r.Phase] = r.Scheduled
		lastDone[r.Phase] = max(lastDone[r.Phase], r.Done)
		if f, ok := firstSent[r.Phase]; !ok || r.Sent < f {
			firstSent[r.Phase] = r.Sent
		}
	}
	// A burst starts only after the previous one has finished.
	for p := 1; p < 3; p++ {
		if firstSent[p] < lastDone[p-1] {
			t.Errorf("phase %d started at %d before phase %d ended at %d", p, firstSent[p], p-1, lastDone[p-1])
		}
	}
}

// runOnePhase replays a hand workload of one phase against a chat server
// that sends a token every millisecond, and returns the workload and the
// trace's records, one for each of the phase's requests.
func runOnePhase(t *testing.T, phase workload.Phase) (*workload.Workload, []trace.Record) {
	t.Helper()
	ts := httptest.NewServer(&chatServer{gap: time.Millisecond})
	t.Cleanup(ts.Close)
	wl := handWorkload(phase)
	cfg := baseConfig(t, wl, ts.URL)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	_, recs := readTrace(t, cfg.Trace)
	if len(recs) != phase.Requests {
		t.Fatalf("%d records, want %d", len(recs), phase.Requests)
	}
	return wl, recs
}

func TestOpenLoopSendsAtOffsets(t *testing.T) {
	wl, recs := runOnePhase(t, workload.Phase{Kind: workload.KindRate, Rate: 200, Requests: 20})
	var phaseStart int64 = -1
	for _, r := range recs {
		off := wl.Requests[r.Index].Offset
		if phaseStart < 0 {
			phaseStart = r.Scheduled - off
		}
		// Scheduled times are exact: phase start + offset, never drifting.
		if r.Scheduled != phaseStart+off {
			t.Errorf("%s scheduled at %d, want %d", r.ID, r.Scheduled, phaseStart+off)
		}
		if r.Sent < r.Scheduled {
			t.Errorf("%s sent %d before its deadline %d", r.ID, r.Sent, r.Scheduled)
		}
	}
}

func TestClosedLoopKeepsCWorkers(t *testing.T) {
	_, recs := runOnePhase(t, workload.Phase{Kind: workload.KindClosed, Concurrency: 3, Requests: 12})
	// At no instant are more than 3 requests in flight.
	for _, a := range recs {
		inflight := 0
		for _, b := range recs {
			if b.Sent <= a.Sent && b.Done > a.Sent {
				inflight++
			}
		}
		if inflight > 3 {
			t.Fatalf("%d requests in flight when %s was sent, want ≤ 3", inflight, a.ID)
		}
	}
}

func TestSaltAndSecrets(t *testing.T) {
	srv := &chatServer{gap: 0}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: 2, Requests: 2})
	// A salt slot: the first word of each prompt.
	for i := range wl.Requests {
		wl.Requests[i].Salt = workload.Span{Start: 0, End: len("alpha"), Words: 1}
	}
	const key = "sk-test-SECRET-4c1d"
	cfg := baseConfig(t, wl, strings.Replace(ts.URL, "http://", "http://user:"+key+"@", 1)+"/v1")
	cfg.APIKey = key
	cfg.Warmup = 1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, a := range srv.auth {
		if a != "Bearer "+key {
			t.Errorf("request %d Authorization %q", i, a)
		}
	}
	if len(srv.bodies) != 3 {
		t.Fatalf("%d requests reached the server, want 3 (1 warm-up + 2)", len(srv.bodies))
	}
	for _, b := range srv.bodies {
		if strings.Contains(b, "alpha beta") {
			t.Errorf("salt slot not filled: %s", b)
		}
	}
	if firstWord(t, srv.bodies[0]) == firstWord(t, srv.bodies[1]) {
		t.Errorf("warm-up used the measured salt; it would warm the prefix cache")
	}
	// The key is nowhere in the trace, compressed or not.
	raw, err := os.ReadFile(cfg.Trace)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(bytes.NewReader(raw))
	plain, err := io.ReadAll(dec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte(key)) || bytes.Contains(raw, []byte(key)) {
		t.Fatal("the API key was written to the trace")
	}
	h, recs := readTrace(t, cfg.Trace)
	if strings.Contains(h.URL, "user") || strings.Contains(h.URL, "@") {
		t.Errorf("header URL %q keeps credentials", h.URL)
	}
	if !h.Salt || h.SaltSeed != 7 {
		t.Errorf("salt not recorded: %v %d", h.Salt, h.SaltSeed)
	}
	warm := 0
	for _, r := range recs {
		if r.Warmup {
			warm++
		}
	}
	if warm != 1 || len(recs) != 3 {
		t.Errorf("%d records, %d warm-up; want 3 and 1", len(recs), warm)
	}
}

func TestFailuresAreData(t *testing.T) {
	// A closed port: connection refused.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String()
	l.Close()

	// The handlers read the body first: net/http notices a client hang-up
	// (and cancels r.Context) only once the request body has been read.
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"1"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(stall.Close)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(silent.Close)
	tooLong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down"}}`)
	}))
	t.Cleanup(tooLong.Close)

	cases := []struct {
		name  string
		url   string
		class trace.ErrorClass
		body  string
	}{
		{"refused", closed, trace.ErrRefused, ""},
		{"stall after first chunk", stall.URL, trace.ErrIdleTimeout, ""},
		{"no byte at all", silent.URL, trace.ErrTimeoutFirst, ""},
		{"429", tooLong.URL, trace.ErrHTTPStatus, "slow down"},
	}
	// In parallel (the servers are closed by Cleanup, after every case):
	// two of the cases wait out a timeout.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: 2, Requests: 2})
			cfg := baseConfig(t, wl, c.url)
			cfg.Model = "m"
			cfg.IdleTimeout = 200 * time.Millisecond
			sum, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Failed != 2 || sum.ByClass[c.class] != 2 {
				t.Fatalf("summary %+v, want 2 failures of class %s", sum, c.class)
			}
			_, recs := readTrace(t, cfg.Trace)
			for _, r := range recs {
				if r.Error == nil || r.Error.Class != c.class || !strings.Contains(r.Error.Body, c.body) {
					t.Errorf("record %s error %+v, want class %s with body %q", r.ID, r.Error, c.class, c.body)
				}
			}
		})
	}
}

func TestCancelStopsSchedulingAndClosesTrace(t *testing.T) {
	srv := &chatServer{gap: 50 * time.Millisecond}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	wl := handWorkload(
		workload.Phase{Kind: workload.KindBurst, Concurrency: 2, Requests: 2},
		workload.Phase{Kind: workload.KindBurst, Concurrency: 2, Requests: 2},
		workload.Phase{Kind: workload.KindBurst, Concurrency: 2, Requests: 2},
	)
	cfg := baseConfig(t, wl, ts.URL)
	cfg.Grace = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stop the run (as SIGINT would) once the first burst is on the wire.
	srv.onRequest = func() { time.AfterFunc(30*time.Millisecond, cancel) }
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Stopped || sum.NotSent != 4 {
		t.Fatalf("summary %+v: want stopped with 4 not sent", sum)
	}
	_, recs := readTrace(t, cfg.Trace)
	if len(recs) != 2 {
		t.Fatalf("%d records, want the 2 sent", len(recs))
	}
	for _, r := range recs {
		if r.Error == nil || r.Error.Class != trace.ErrCancelled {
			t.Errorf("record %s: %+v, want cancelled (cut after the grace period)", r.ID, r.Error)
		}
	}
}

func TestRedactURL(t *testing.T) {
	cases := map[string]string{
		"http://127.0.0.1:8080":            "http://127.0.0.1:8080",
		"https://u:p@host/v1":              "https://host/v1",
		"http://host/?api_key=abc&model=x": "http://host/?api_key=REDACTED&model=REDACTED", // every query value
		"http://host/?token=abc":           "http://host/?token=REDACTED",
		"::not a url":                      "(unparseable URL)",
	}
	for in, want := range cases {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// firstWord is the first word of the user message in a chat request body.
func firstWord(t *testing.T, body string) string {
	t.Helper()
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("request body %q: %v", body, err)
	}
	return strings.Fields(req.Messages[0].Content)[0]
}

// A server that sends the finish chunk but never closes the stream (no
// [DONE], no EOF): the response is complete; only the idle timer notices
// the open connection, and it must not turn the record into a failure.
func TestFinishedButNeverClosedIsComplete(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"1"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":","},"finish_reason":"length"}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: 1, Requests: 1})
	cfg := baseConfig(t, wl, ts.URL)
	cfg.Model = "m"
	cfg.IdleTimeout = 150 * time.Millisecond
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 1 {
		t.Fatalf("summary %s: want the finished response counted ok", sum)
	}
	_, recs := readTrace(t, cfg.Trace)
	r := recs[0]
	if r.FinishReason != "length" || r.Done != r.Chunks[len(r.Chunks)-1].T {
		t.Errorf("finish %q, done %d, last chunk %d: want done at the last chunk", r.FinishReason, r.Done, r.Chunks[len(r.Chunks)-1].T)
	}
}

func TestSendTokenIDsNeedsTheWorkloadsTokenizer(t *testing.T) {
	wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: 1, Requests: 1})
	wl.Header.Shape = workload.ShapeCompletion
	wl.Header.Tokenizer = "hf:qwen3"
	cfg := baseConfig(t, wl, "http://127.0.0.1:1")
	cfg.API = "openai-completions"
	cfg.SendTokenIDs = true
	// The library names its field; the CLI turns it into --tokenizer
	// (cmd/llmreplay's flagError).
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "Config.Tokenizer cannot be recalled (made with the tokenizer.json hf:qwen3, whose path was not recorded") {
		t.Fatalf("hf tokenizer without a tokenizer: %v, want an error naming Config.Tokenizer", err)
	}
	wl.Header.Tokenizer = "o200k_base"
	wl.Header.TokenizerDigest = "sha256:not-this-one"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "not the one the workload was built with") {
		t.Fatalf("digest mismatch: %v", err)
	}
}

func TestWorkloadTheAPICannotCarryFailsUpFront(t *testing.T) {
	wl := handWorkload(workload.Phase{Kind: workload.KindBurst, Concurrency: 1, Requests: 1}) // chat shape
	cfg := baseConfig(t, wl, "http://127.0.0.1:1")
	cfg.API = "llamacpp"
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "completion shape") {
		t.Fatalf("chat workload to llamacpp: %v, want an error naming the completion shape", err)
	}
	if _, statErr := os.Stat(cfg.Trace); statErr == nil {
		t.Error("a trace was written for a run that could not start")
	}
}
