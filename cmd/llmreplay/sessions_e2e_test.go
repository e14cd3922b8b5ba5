//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/llmreplay/llmreplay/sim"
	"github.com/llmreplay/llmreplay/trace"
)

// simMetric reads one sample of the simulator's /metrics.
func simMetric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s on the simulator's /metrics", name)
	return 0
}

// A multi-turn workload replayed against `llmreplay sim` with default
// flags: every turn resends the conversation with the answer received, so
// the simulator's prefix cache serves each warm turn the full 16-token
// blocks of the previous turn's prompt and answer, and the second session
// the shared system prompt. The numbers come from the simulator's model
// (default profile vllm-rtx5090-bf16, blocks of 16 tokens), not from time.
func TestSessionsAgainstSim(t *testing.T) {
	bin := parallelBinary(t)
	sim := startSim(t, bin)
	dir := t.TempDir()
	const (
		block  = 16
		answer = 32
		system = 64 // a whole number of blocks
		input  = 200
	)
	wl := buildWorkload(t, bin, dir, "--input-tokens", strconv.Itoa(input), "--max-tokens", strconv.Itoa(answer),
		"--schedule", "closed:1", "--sessions", "2", "--turns", "3", "--think-time", "5ms", "--system-tokens", strconv.Itoa(system))
	if out, e, code := run(t, nil, bin, "workload", "inspect", wl); code != 0 || !strings.Contains(out, "format:     llmreplay-workload 1.2") ||
		!strings.Contains(out, "sessions:   2 of 3 turns, think time 5ms") || !strings.Contains(out, "system:     a 64-token system prompt") {
		t.Fatalf("workload inspect: exit %d: %s%s", code, out, e)
	}
	tr := filepath.Join(dir, "chat.trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", sim, "-o", tr); code != 0 || !strings.Contains(e, "6 requests sent, 6 ok, 0 failed") {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	h, recs := readTrace(t, tr)
	if h.Minor < 4 || h.Options["session_header"] != "X-Session-ID" {
		t.Fatalf("trace %d.%d, session_header %q", h.Major, h.Minor, h.Options["session_header"])
	}
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	type usage struct {
		Prompt  int `json:"prompt_tokens"`
		Details struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	prev := map[string]trace.Record{}
	sessions := map[string]bool{}
	for _, rec := range recs {
		if !rec.OK() {
			t.Fatalf("%s failed: %v", rec.ID, rec.Error)
		}
		var u usage
		if err := json.Unmarshal([]byte(rec.Usage), &u); err != nil {
			t.Fatalf("%s usage %q: %v", rec.ID, rec.Usage, err)
		}
		// The whole conversation as sent, counted by the workload's
		// tokenizer, is what the simulator (same tokenizer) counted.
		if u.Prompt != rec.SentInputTokens {
			t.Errorf("%s turn %d: the sim counted %d prompt tokens, the trace says %d were sent", rec.ID, rec.Turn, u.Prompt, rec.SentInputTokens)
		}
		var wantSent, wantCached int
		switch p, ok := prev[rec.Session]; {
		case rec.Turn == 1 && len(sessions) == 0:
			wantSent, wantCached = system+input, 0
		case rec.Turn == 1:
			// The second session shares the system prompt (64 tokens, 4
			// blocks) and the run's salt words, not its opening words.
			wantSent, wantCached = system+input, system
		case ok && p.Turn == rec.Turn-1:
			wantSent = p.SentInputTokens + answer + rec.InputTokens
			wantCached = (p.SentInputTokens + answer) / block * block
		default:
			t.Fatalf("%s: turn %d of %s does not follow its turn %d", rec.ID, rec.Turn, rec.Session, rec.Turn-1)
		}
		if rec.SentInputTokens != wantSent || u.Details.Cached != wantCached {
			t.Errorf("%s (%s turn %d): sent %d, cached %d; want %d, %d", rec.ID, rec.Session, rec.Turn, rec.SentInputTokens, u.Details.Cached, wantSent, wantCached)
		}
		sessions[rec.Session] = true
		prev[rec.Session] = rec
	}
	if len(sessions) != 2 {
		t.Fatalf("%d sessions in the trace, want 2", len(sessions))
	}
	// Every turn reached the simulator with its session's id.
	if n := simMetric(t, sim, "llmreplay_sim_session_requests_total"); n != 6 {
		t.Errorf("the simulator saw %v requests with a session id, want 6", n)
	}
	if n := simMetric(t, sim, "llmreplay_sim_sessions_seen"); n != 2 {
		t.Errorf("the simulator saw %v distinct session ids, want 2", n)
	}
	// The analysis reads the multi-turn trace.
	if out, e, code := run(t, nil, bin, "analyze", tr); code != 0 || !strings.Contains(out, "tok/s  per stream ") {
		t.Fatalf("analyze: exit %d: %s%s", code, out, e)
	}
	// export carries each turn's session, turn and prompt as sent.
	rows := exportedRequests(t, bin, tr)
	if len(rows) != 6 {
		t.Fatalf("requests.csv: %d rows, want 6", len(rows))
	}
	for _, row := range rows {
		rec := prev[row["session"]]
		if rec.Session == "" || row["turn"] == "" || row["turn"] == "0" {
			t.Errorf("requests.csv row without a session or turn: %v", row)
		}
		if row["turn"] == strconv.Itoa(rec.Turn) && row["sent_input_tokens"] != strconv.Itoa(rec.SentInputTokens) {
			t.Errorf("requests.csv: %s turn %s sent_input_tokens %s, want %d", rec.Session, row["turn"], row["sent_input_tokens"], rec.SentInputTokens)
		}
	}
}

// dropServer answers a conversation's first turn and drops the connection
// on its second (more than two messages), as a server that dies
// mid-session does; it remembers the session header of every request.
type dropServer struct {
	mu      sync.Mutex
	headers []string
}

func (s *dropServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r) // pre-warming, the /tokenize probe
		return
	}
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &req)
	s.mu.Lock()
	s.headers = append(s.headers, fmt.Sprintf("%s %d", r.Header.Get("X-Session-ID"), len(req.Messages)))
	s.mu.Unlock()
	if len(req.Messages) > 2 {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1, 2\"},\"finish_reason\":null}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// A server that drops the connection mid-session: the failed turn is
// recorded as the failure it was, the session's later turns as not sent
// with the reason, and nothing of the workload is missing from the trace.
func TestSessionDroppedMidway(t *testing.T) {
	bin := parallelBinary(t)
	srv := &dropServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "2", "--schedule", "burst:2", "--repeats", "1", "--turns", "4")
	tr := filepath.Join(dir, "drop.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", ts.URL, "--model", "m", "-o", tr)
	if code != 0 || !strings.Contains(e, "4 turns not sent (an earlier turn of their session failed)") {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	_, recs := readTrace(t, tr)
	if len(recs) != 8 {
		t.Fatalf("%d records, want all 8 turns", len(recs))
	}
	for _, rec := range recs {
		switch rec.Turn {
		case 1:
			if !rec.OK() {
				t.Errorf("%s turn 1: %v", rec.ID, rec.Error)
			}
		case 2:
			if rec.OK() || rec.Error.Class == trace.ErrNotSent || rec.Sent == 0 {
				t.Errorf("%s turn 2: want a failure of a sent request, got %+v", rec.ID, rec.Error)
			}
		default:
			if rec.Error == nil || rec.Error.Class != trace.ErrNotSent || !strings.Contains(rec.Error.Message, "turn 2 of the session failed") || rec.Sent != 0 {
				t.Errorf("%s turn %d: want not-sent naming turn 2, got %+v", rec.ID, rec.Turn, rec.Error)
			}
		}
	}
	// A turn 2 sent on the connection its turn 1 kept alive got FIN before
	// any response byte: the client cannot tell this server from one that
	// had closed the connection before reading (llama-server), so it sent
	// it once more on a new connection, and says so; it failed again.
	retried := 0
	for _, rec := range recs {
		if strings.Contains(rec.Notes, "retried once on a new connection") {
			retried++
			if rec.Turn != 2 {
				t.Errorf("%s turn %d was retried", rec.ID, rec.Turn)
			}
		}
	}
	srv.mu.Lock()
	seen := append([]string(nil), srv.headers...)
	srv.mu.Unlock()
	if len(seen) != 4+retried {
		t.Fatalf("the server saw %d requests, want 4 (2 sessions × 2 turns) and %d retries: %q", len(seen), retried, seen)
	}
	for _, h := range seen {
		if !regexp.MustCompile(`^p000-s000[01] [13]$`).MatchString(h) {
			t.Errorf("session header and message count %q", h)
		}
	}
	if info, _, code := run(t, nil, bin, "trace", "info", tr); code != 0 || !strings.Contains(info, "8 (2 ok, 2 failed: 2 ") || !strings.Contains(info, "4 not sent: an earlier turn of their session failed)") {
		t.Errorf("trace info does not count the not-sent turns apart:\n%s", info)
	}
	// The analysis counts the not-sent turns apart from the failures.
	out, e, code := run(t, nil, bin, "analyze", tr, "--format", "json")
	if code != 0 || !strings.Contains(out, `"not_sent": 4`) {
		t.Fatalf("analyze: exit %d: %s\n%s", code, e, out)
	}
}

// Bad session settings: one line naming the flag and the fix, exit 2, no
// file written.
func TestSessionBadFlags(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	out := filepath.Join(dir, "x.workload.zst")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--turns", "0"}, `--turns "0" has a session of no turns`},
		{[]string{"--turns", "2..x"}, `--turns "2..x" is not a number of turns`},
		{[]string{"--turns", "8..2"}, `runs backwards`},
		{[]string{"--turns", "2", "--think-time", "-1s"}, `--think-time "-1s" is negative`},
		{[]string{"--turns", "2", "--think-time", "soon"}, `--think-time "soon" is not a think time`},
		{[]string{"--turns", "2", "--think-time", "exp:"}, `--think-time "exp:" is not a think time`},
		{[]string{"--think-time", "1s"}, `add --turns`},
		{[]string{"--turns", "2", "--sessions", "0", "--schedule", "closed:2"}, `bad --sessions 0`},
	} {
		_, e, code := run(t, nil, bin, append([]string{"workload", "build", "-o", out}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, e, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v left %s", tc.args, out)
		}
	}
	wl := buildWorkload(t, bin, dir, "--max-tokens", "2", "--schedule", "burst:1", "--repeats", "1", "--turns", "2")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", "http://127.0.0.1:1", "--session-header", "bad header", "-o", filepath.Join(dir, "t.trace.zst"))
	if code != 2 || !strings.Contains(e, `--session-header "bad header" is not an HTTP header name`) {
		t.Errorf("replay --session-header 'bad header': exit %d, %q", code, e)
	}
}

// A multi-turn run against the simulator (llama.cpp profile, its prefix
// cache on), analysed by turn through the binary: later turns are warm,
// and what prefill_saved says each warm turn saved is what the simulator's
// model charges for the prompt tokens it served from its cache
// (PrefillPerToken each; the fixed costs are the same cold or warm). Three
// prompt lengths make the cold first turns a line to read the warm turns
// against. Judged on the model with wide margins, never on wall time.
func TestAnalyzeByTurnAgainstSim(t *testing.T) {
	bin := parallelBinary(t)
	const profile = "llamacpp-rtx5090-q4km"
	p, err := sim.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	perToken := float64(p.PrefillPerToken) / 1e6 // ms
	url := startSim(t, bin, "--profile", profile)
	dir := t.TempDir()
	// Prompts of 3,000 and 6,000 tokens: a warm turn saves ~520 ms of
	// prefill. With 1,000 and 2,000 it saved ~170 ms, and a loaded
	// machine once held a cold request up by as much (prefill_saved -1 ms
	// against the model's 173); the ratio judged below must stand above
	// such stalls.
	wl := buildWorkload(t, bin, dir, "--input-tokens", "3000,6000,12000", "--max-tokens", "16",
		"--schedule", "closed:1", "--sessions", "2", "--turns", "3")
	tr := filepath.Join(dir, "chat.trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", tr); code != 0 || !strings.Contains(e, "18 requests sent, 18 ok, 0 failed") {
		t.Fatalf("replay: exit %d: %s", code, e)
	}
	out, e, code := run(t, nil, bin, "analyze", tr, "--by", "input-tokens,turn", "--format", "json")
	if code != 0 {
		t.Fatalf("analyze --format json: exit %d: %s", code, e)
	}
	type value struct {
		V *float64 `json:"value"`
		N int      `json:"n"`
	}
	var doc struct {
		By     []string `json:"by"`
		Groups []struct {
			Keys    map[string]any    `json:"keys"`
			Metrics map[string]value  `json:"metrics"`
			Notes   map[string]string `json:"notes"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 9 {
		t.Fatalf("%d groups by input length and turn, want 9: %s", len(doc.Groups), out)
	}
	judged := 0
	for _, g := range doc.Groups {
		in, turn := int(g.Keys["input_tokens"].(float64)), int(g.Keys["turn"].(float64))
		m := g.Metrics
		if m["requests_ok"].V == nil || *m["requests_ok"].V != 2 {
			t.Errorf("input %d turn %d: requests_ok %v, want 2", in, turn, m["requests_ok"].V)
		}
		saved := m["prefill_saved_mean"]
		switch {
		case turn == 1:
			// First turns are cold: nothing cached, nothing saved.
			if c := m["cached_tokens"].V; c == nil || *c != 0 || saved.V != nil {
				t.Errorf("input %d turn 1: cached_tokens %v, prefill_saved %v; want 0 and none", in, c, saved.V)
			}
		case in == 12000:
			// Past the longest cold prompt: absent, with the reason.
			if saved.V != nil || !strings.Contains(g.Notes["prefill_saved"], "outside the cold requests' lengths") {
				t.Errorf("input 12000 turn %d: prefill_saved %v, note %q; want none, with the reason", turn, saved.V, g.Notes["prefill_saved"])
			}
		default:
			judged++
			cached := m["server_cached_tokens_mean"]
			if saved.V == nil || saved.N != 2 || cached.V == nil || *cached.V < 1500 {
				t.Errorf("input %d turn %d: prefill_saved %v over %d, cached %v", in, turn, saved.V, saved.N, cached.V)
				continue
			}
			model := perToken * *cached.V
			if r := *saved.V / model; r < 0.4 || r > 2.5 {
				t.Errorf("input %d turn %d: prefill_saved %.1f ms, the simulator's model %.1f ms (%.0f cached tokens × %.3f ms): ratio %.2f",
					in, turn, *saved.V, model, *cached.V, perToken, r)
			}
			if s := m["cache_speedup"].V; s == nil || *s <= 1 {
				t.Errorf("input %d turn %d: cache_speedup %v, want above 1", in, turn, s)
			}
		}
	}
	if judged != 4 {
		t.Errorf("%d warm groups judged, want 4", judged)
	}
	// The command the README shows: one row per turn, the warm turns'
	// saving with a footnote for the turns too long to compare.
	out, e, code = run(t, nil, bin, "analyze", tr, "--by", "turn", "--metrics", "requests_ok,ttft_p50,cached_tokens,cache_hit_rate,prefill_saved,cache_speedup")
	if code != 0 {
		t.Fatalf("analyze --by turn: exit %d: %s", code, e)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == profile && (f[1] == "1" || f[1] == "2" || f[1] == "3") {
			rows++
		}
	}
	if rows != 3 || !strings.Contains(out, "metrics by label, turn") || !strings.Contains(out, "2 of 6 warm requests left out") {
		t.Errorf("analyze --by turn: %d turn rows, want 3:\n%s", rows, out)
	}
}
