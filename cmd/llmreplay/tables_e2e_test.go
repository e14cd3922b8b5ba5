//go:build unix

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// csvByKey reads analyze's CSV into one map per row, keyed by column.
func csvByKey(t *testing.T, out string) []map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV: %v\n%s", err, out)
	}
	var res []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		res = append(res, m)
	}
	return res
}

// Failures are visible in the default output. Against the simulator
// answering half of its requests with HTTP 500, with default flags: every
// block of the summary, and every cell of the concurrency-sweep table
// (--wide and Markdown), whose requests did not all succeed says how many
// failed and the error class, the count agreeing with the tidy CSV's
// requests_failed; the server's message is a note; no cell shows "— / —".
func TestFailuresVisibleInTable(t *testing.T) {
	bin := parallelBinary(t)
	url, dir, wl := simWorkload(t, bin, []string{"--profile", "fast", "--token-interval", "1ms", "--error-rate", "0.5"}, "--max-tokens", "8", "--schedule", "burst:1,4", "--repeats", "3")
	tr := filepath.Join(dir, "half.trace.zst")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", url, "-o", tr)
	if code != 0 && !strings.Contains(e, " 0 ok") {
		t.Fatalf("replay: %d %s", code, e)
	}
	out, e, code := run(t, nil, bin, "analyze", tr, "--format", "csv")
	if code != 0 {
		t.Fatalf("analyze csv: %d %s", code, e)
	}
	rows := csvByKey(t, out)
	summary, e, code := run(t, nil, bin, "analyze", tr)
	if code != 0 {
		t.Fatalf("analyze: %d %s", code, e)
	}
	summary = unwrapped(summary)
	text, _, _ := run(t, nil, bin, "analyze", "--wide", tr)
	md, _, _ := run(t, nil, bin, "analyze", tr, "--format", "markdown")
	anyFailed := false
	for _, r := range rows {
		ok, failed := 0, 0
		fmt.Sscan(r["requests_ok"], &ok)
		fmt.Sscan(r["requests_failed"], &failed)
		var want, head string
		switch {
		case failed == 0:
			continue
		case ok == 0:
			want = fmt.Sprintf("all %d failed: http-status", failed)
			head = want
		default:
			want = fmt.Sprintf("(%d of %d failed: http-status)", failed, ok+failed)
			head = fmt.Sprintf("%d of %d failed: http-status", failed, ok+failed)
		}
		if block := regexp.MustCompile(`(?m)^fast · concurrency ` + r["concurrency"] + ` · .*$`).FindString(summary); !strings.Contains(block, " · "+head+" [") {
			t.Errorf("concurrency %s: %d of %d failed, but its summary block reads %q (want %q)", r["concurrency"], failed, ok+failed, block, head)
		}
		anyFailed = true
		if r["error_class"] != "http-status" {
			t.Errorf("CSV error_class %q at concurrency %s", r["error_class"], r["concurrency"])
		}
		line := regexp.MustCompile(`(?m)^` + r["concurrency"] + ` .*$`).FindString(text)
		if !strings.Contains(line, want) {
			t.Errorf("concurrency %s: %d of %d failed, but its row reads %q (want %q)", r["concurrency"], failed, ok+failed, line, want)
		}
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown table lacks %q:\n%s", want, md)
		}
	}
	if !anyFailed {
		t.Fatalf("no request failed at --error-rate 0.5: the test proves nothing\n%s", out)
	}
	for _, out := range []string{summary, text} {
		if !strings.Contains(out, "failed requests (http-status): HTTP 500 Internal Server Error: simulated internal error") {
			t.Errorf("no note with the server's message:\n%s", out)
		}
	}
	if strings.Contains(text, "— / —") {
		t.Errorf("a cell shows — / —:\n%s", text)
	}
	// bench prints the same summary (and writes the table as Markdown
	// beside the trace) through the same renderer.
	bout, be, code := run(t, nil, bin, "bench", "--url", url, "--concurrency", "4,8", "--max-tokens", "8", "--repeats", "1", "--results", filepath.Join(dir, "bench"))
	if code != 0 && !strings.Contains(be, " 0 ok") {
		t.Fatalf("bench: %d %s", code, be)
	}
	if !regexp.MustCompile(`\d+ of \d+ failed: http-status|all \d+ failed: http-status`).MatchString(bout) {
		t.Errorf("bench's summary does not show the failures:\n%s\n%s", bout, be)
	}
}

// contextWall is a hand-made llama.cpp-like server: prompts over maxBody
// bytes are refused with HTTP 400 and llama.cpp's explanation in the body;
// others stream a short answer.
func contextWall(maxBody int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost {
			return
		}
		if len(b) > maxBody {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d, \"},\"finish_reason\":null}]}\n\n", i)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}

// A server with a context wall. The summary's blocks and the wide table's
// rows past the wall read "all N failed: http-status" (not "— / —" with a
// client_behind note), with the server's own words as a note, and the wide
// table's evidence quotes them in plain text: "input tokens 5,000: 6 of 6
// failed, HTTP 400 Bad Request: request (5000 tokens) exceeds the available
// context size …". The JSON keeps the structure: the by_value rows carry the
// message as a field.
func TestServerErrorMessageInEvidence(t *testing.T) {
	bin := parallelBinary(t)
	ts := contextWall(12000) // 1,000 tokens of prose ≈ 5 KB of JSON; 5,000 ≈ 25 KB
	defer ts.Close()
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--input-tokens", "1000,5000", "--max-tokens", "4", "--schedule", "burst:1,2", "--repeats", "2")
	tr := filepath.Join(dir, "wall.trace.zst")
	mustRun(t, bin, "replay", wl, "--url", ts.URL, "--model", "m", "-o", tr)
	summary, e, code := run(t, nil, bin, "analyze", tr)
	if code != 0 {
		t.Fatalf("analyze: %d %s", code, e)
	}
	summary = unwrapped(summary)
	text, _, _ := run(t, nil, bin, "analyze", "--wide", tr)
	msg := "HTTP 400 Bad Request: request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"
	for _, want := range []string{
		"m · concurrency 1, input 5000 tokens · all 2 failed: http-status [", // 2 repeats × 1
		"m · concurrency 2, input 5000 tokens · all 4 failed: http-status [", // 2 repeats × 2
		"failed requests (http-status): " + msg,
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("analyze's summary lacks %q:\n%s", want, summary)
		}
	}
	for _, want := range []string{
		"all 2 failed: http-status",
		"all 4 failed: http-status",
		"failed requests (http-status): " + msg,
		"input tokens 5,000: 6 of 6 failed, " + msg,
		"input tokens 1,000: 0 of 6 failed",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("analyze --wide lacks %q:\n%s", want, text)
		}
	}
	for _, out := range []string{summary, text} {
		if strings.Contains(out, "— / —") || strings.Contains(out, "map[") {
			t.Errorf("analyze shows — / — or Go map syntax:\n%s", out)
		}
		// A cell where nothing succeeded gets no client_behind note; the 1,000-token
		// cells may (a loaded machine sends late: 1.03 ms p99 at load 20).
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "client_behind") && strings.Contains(line, "input_tokens=5000") {
				t.Errorf("a client_behind note on a cell whose requests all failed: %s", line)
			}
		}
	}
	// The HTML report shows the same plain-words evidence.
	page := filepath.Join(dir, "wall.html")
	mustRun(t, bin, "report", tr, "-o", page)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "input tokens 5,000: 6 of 6 failed, "+msg) || strings.Contains(string(html), "map[") {
		t.Errorf("the report's evidence is not in plain words with the server's message")
	}
	js, _, code := run(t, nil, bin, "analyze", tr, "--format", "json")
	if code != 0 {
		t.Fatal("analyze --format json failed")
	}
	var doc struct {
		Groups []struct {
			Keys          map[string]any    `json:"keys"`
			ErrorExamples map[string]string `json:"error_examples"`
		} `json:"groups"`
		Warnings []struct {
			Code     string `json:"code"`
			Evidence struct {
				ByValue []map[string]any `json:"by_value"`
			} `json:"evidence"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range doc.Warnings {
		if w.Code != "errors_clustered" {
			continue
		}
		for _, row := range w.Evidence.ByValue {
			if row["input_tokens"] == 5000.0 {
				found = row["message"] == msg && row["failed"] == 6.0 && row["requests"] == 6.0
			}
		}
	}
	if !found {
		t.Errorf("the JSON's errors_clustered evidence lacks the row {input_tokens: 5000, failed: 6, requests: 6, message}:\n%s", js)
	}
}

// A 32,000-token prompt on the calibrated simulator: the prefill makes TTFT
// most of E2E, yet the response streamed token by token and analyze must not
// call it not_streamed.
func TestLongPromptIsStreamed(t *testing.T) {
	bin := parallelBinary(t)
	// The default, calibrated profile (~17 µs per prompt token: ~0.55 s of
	// prefill), its tokens paced 50 ms apart from the first: a client
	// stalled by a loaded machine would otherwise read the profile's 3 ms
	// decode in one read, which is the not-streamed shape this test must
	// not see. Paced, the seven chunks after the first span 350 ms, and
	// only a stall that long could bunch them.
	_, _, tr := replaySim(t, bin, []string{"--token-interval", "50ms"}, "--input-tokens", "32000", "--max-tokens", "8", "--schedule", "burst:1", "--repeats", "1")
	_, recs := readTrace(t, tr)
	for _, rec := range recs {
		if !rec.OK() || len(rec.Chunks) < 8 {
			t.Fatalf("%s: error %v, %d chunks", rec.ID, rec.Error, len(rec.Chunks))
		}
		// The long-prefill case: TTFT most of E2E (~0.55 s of ~0.9 s,
		// 0.61; a loaded machine stretches the prefill, while the paced
		// decode stays 350 ms unless the simulator stalls).
		ttft, e2e := rec.Chunks[0].T-rec.Sent, rec.Done-rec.Sent
		if float64(ttft) < 0.5*float64(e2e) {
			t.Fatalf("TTFT %d ns is not most of E2E %d ns: not the long-prefill case", ttft, e2e)
		}
	}
	out, e := mustRun(t, bin, "analyze", tr)
	if strings.Contains(out+e, "not_streamed") {
		t.Errorf("a streamed 32k-prompt response is called not_streamed:\n%s%s", out, e)
	}
}

// `trace cat --requests` through the binary on a hand-made trace, every
// figure worked out by hand; and the median of the ok rows' per_stream_tps
// is analyze's per-stream figure.
func TestTraceCatRequests(t *testing.T) {
	bin := parallelBinary(t)
	const ms = int64(1_000_000)
	h := trace.Header{Label: "hand", Tokenizer: "o200k_base", Model: "m", Phases: []trace.Phase{
		{Index: 0, Name: "c2", Kind: "burst", Concurrency: 2, InputTokens: 100, MaxTokens: 4, Requests: 3}}}
	chunks := func(at ...int64) []trace.Chunk {
		var c []trace.Chunk
		for i, t := range at {
			c = append(c, trace.Chunk{T: t * ms, Bytes: 40, Text: []string{"1", ",", " 2"}[i], Tokens: []int{1, 1, 2}[i]})
		}
		return c
	}
	recs := []trace.Record{
		// a: sent 10 ms (scheduled 0: 10 ms late); first chunk 110 ms →
		// ttft 0.1 s; done 150 ms → e2e 0.14 s; 1+1+2 = 4 tokens (the
		// server's per-chunk counts); per-stream (4−1)/(0.13−0.11 s) = 150;
		// tpot (140 − 100 ms)/(4 − 1) = 13.333 ms.
		{ID: "a", Index: 0, Phase: 0, InputTokens: 100, MaxTokens: 4, Scheduled: 0, Sent: 10 * ms, Done: 150 * ms, Status: 200,
			Chunks: chunks(110, 120, 130), FinishReason: "length"},
		// b: sent 0; ttft 0.2 s; e2e 0.26 s; per-stream 3/(0.26−0.2 s) = 50;
		// tpot (260 − 200)/3 = 20 ms; usage says 120 prompt tokens.
		{ID: "b", Index: 1, Phase: 0, InputTokens: 100, MaxTokens: 4, Scheduled: 0, Sent: 0, Done: 260 * ms, Status: 200,
			Chunks: chunks(200, 230, 260), FinishReason: "length", Usage: `{"prompt_tokens":120,"completion_tokens":4}`},
		// c: HTTP 503 after 5 ms, with a plain-text body.
		{ID: "c", Index: 2, Phase: 0, InputTokens: 100, MaxTokens: 4, Scheduled: 0, Sent: 0, Done: 5 * ms, Status: 503,
			Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "HTTP 503 Service Unavailable", Body: "server is loading the model\n"}},
	}
	p := filepath.Join(t.TempDir(), "hand.trace.zst")
	writeTrace(t, p, h, recs)
	out, e, code := run(t, nil, bin, "trace", "cat", "--requests", p)
	if code != 0 || e != "" {
		t.Fatalf("trace cat --requests: %d %s", code, e)
	}
	want := []string{
		`{"label":"hand","id":"a","index":0,"phase":"c2","phase_index":0,"concurrency":2,"repeat":0,"ok":true,"status":200,"sent_s":0.01,"lateness_s":0.01,"ttft_s":0.1,"e2e_s":0.14,"tpot_s":0.013333333,"input_tokens":100,"output_tokens":4,"output_tokens_source":"chunk-tokens","per_stream_tps":150,"chunks":3,"finish_reason":"length"}`,
		`{"label":"hand","id":"b","index":1,"phase":"c2","phase_index":0,"concurrency":2,"repeat":0,"ok":true,"status":200,"sent_s":0,"lateness_s":0,"ttft_s":0.2,"e2e_s":0.26,"tpot_s":0.02,"input_tokens":120,"output_tokens":4,"output_tokens_source":"usage","per_stream_tps":50,"chunks":3,"finish_reason":"length"}`,
		`{"label":"hand","id":"c","index":2,"phase":"c2","phase_index":0,"concurrency":2,"repeat":0,"ok":false,"status":503,"sent_s":0,"lateness_s":0,"ttft_s":null,"e2e_s":0.005,"tpot_s":null,"input_tokens":100,"output_tokens":0,"output_tokens_source":"tokenizer","per_stream_tps":null,"chunks":0,"error_class":"http-status","error_message":"HTTP 503 Service Unavailable: server is loading the model"}`,
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, got[i], want[i])
		}
	}
	// The median of the ok rows' per-stream speeds, (150 + 50)/2 = 100,
	// is analyze's per-stream figure for the same requests.
	csvOut, _ := mustRun(t, bin, "analyze", p, "--format", "csv")
	if r := csvByKey(t, csvOut)[0]; r["per_stream_tps"] != "100" || r["requests_failed"] != "1" {
		t.Errorf("analyze's per-stream %s, failed %s; want 100 and 1", r["per_stream_tps"], r["requests_failed"])
	}
}
