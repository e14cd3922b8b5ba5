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
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/llmreplay/llmreplay/internal/safetext"
	"github.com/llmreplay/llmreplay/trace"
	"github.com/spf13/cobra"
)

// spoofID is a model id a hostile server could send: an escape sequence
// (red text), a bell, every bidirectional control (the right-to-left
// override U+202E reverses what follows on screen, the isolates U+2066–9,
// the embeddings and marks), a C1 CSI and HTML.
const spoofID = "m\x1b[31mRED\x07\u202eevil\u2066iso\u2069\u202a\u202b\u202c\u202d\u2067\u2068\u200e\u200f\u061c\u009b<script>alert(1)</script>"

// spoofShown is spoofID as a person must see it: every such character a
// visible escape (safetext.Show).
const spoofShown = `m\x1b[31mRED\x07\u202eevil\u2066iso\u2069\u202a\u202b\u202c\u202d\u2067\u2068\u200e\u200f\u061c\u009b<script>alert(1)</script>`

// spoofRune reports a character that must not reach a person raw: C0
// controls but the line feed (the output's own line ends), DEL, C1, the
// line and paragraph separators, the bidirectional controls and every
// other format character (zero-width space and joiners, BOM, tags).
func spoofRune(r rune) bool {
	switch {
	case r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == '\u2028', r == '\u2029',
		r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c',
		unicode.Is(unicode.Cf, r):
		return true
	}
	return false
}

// invisibleID is a model id that passes for "gpt-4o" on screen: format
// characters that draw nothing (zero-width space, non-joiner, joiner,
// word joiner, BOM, soft hyphen) and, in tag characters (U+E0000 block),
// the hidden ASCII "HI". invisibleShown is how a person must see it.
const (
	invisibleID    = "gpt-4o\u200b\u200c\u200d\u2060\ufeff\u00ad\U000E0048\U000E0049"
	invisibleShown = `gpt-4o\u200b\u200c\u200d\u2060\ufeff\u00ad\U000e0048\U000e0049`
)

// TestInvisibleFormatCharsEscaped: a model id padded with invisible format
// characters is shown with each of them as a visible escape by analyze's
// table and CSV, trace info and report's HTML page, so it cannot pass for
// the plain id it looks like; trace cat and analyze --format json write
// them as JSON \u escapes (the tag characters as surrogate pairs) that
// decode to the exact id. Before the fix only the bidirectional format
// characters were escaped, and these reached every output raw.
func TestInvisibleFormatCharsEscaped(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := spoofTrace(t, dir, "z.trace.zst", invisibleID, invisibleID)
	page := filepath.Join(dir, "z.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analyze", tr}, invisibleShown},
		{[]string{"analyze", "--format", "csv", tr}, "\n" + invisibleShown + ","},
		{[]string{"trace", "info", tr}, "model=" + invisibleShown},
		{[]string{"trace", "cat", "--requests", tr}, `"label":"gpt-4o\u200b\u200c\u200d\u2060\ufeff\u00ad\udb40\udc48\udb40\udc49"`},
		{[]string{"report", tr, "-o", page}, ""},
	} {
		name := strings.Join(c.args[:2], " ")
		out, e, code := run(t, nil, bin, c.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, e)
		}
		checkNoSpoof(t, name, out+e)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s does not show %q:\n%.600s", name, c.want, out)
		}
		if c.args[1] == "cat" {
			var rec struct{ Label string }
			if err := json.Unmarshal([]byte(out[:strings.IndexByte(out, '\n')]), &rec); err != nil || rec.Label != invisibleID {
				t.Errorf("trace cat: the label decodes to %q (%v), want the exact id", rec.Label, err)
			}
		}
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkNoSpoof(t, "the HTML page", string(b))
	if !strings.Contains(string(b), "<dt>model</dt><dd>"+invisibleShown+"</dd>") {
		t.Errorf("the page does not show the model as %q", invisibleShown)
	}
}

// checkNoSpoof fails when out holds a spoofRune.
func checkNoSpoof(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if spoofRune(r) {
			lo, hi := max(i-40, 0), min(i+40, len(out))
			t.Errorf("%s holds a raw %U: …%q…", what, r, out[lo:hi])
			return
		}
	}
}

// spoofTrace writes a hand-made trace whose every server-sent string
// (model, label as replay defaults it, the server's address, finish
// reasons, notes, an error message and body) is text, and returns its
// path: six streamed requests and one HTTP 500.
func spoofTrace(t *testing.T, dir, name, label, text string) string {
	t.Helper()
	const ms = int64(1_000_000)
	h := trace.Header{Label: label, Tokenizer: "o200k_base", Model: text, API: "openai-chat", URL: "http://127.0.0.1:1/" + text,
		Phases: []trace.Phase{{Index: 0, Name: "c2", Kind: "burst", Concurrency: 2, InputTokens: 100, MaxTokens: 4, Requests: 7}}}
	var recs []trace.Record
	for i := range 6 {
		at := int64(i) * 10 * ms
		recs = append(recs, trace.Record{ID: fmt.Sprintf("r%d", i), Index: i, InputTokens: 100, MaxTokens: 4,
			Scheduled: at, Sent: at, Headers: at + 20*ms, Done: at + 100*ms, Status: 200,
			Chunks: []trace.Chunk{
				{T: at + 30*ms, Bytes: 40, Text: "1"}, {T: at + 60*ms, Bytes: 40, Text: ", 2"}, {T: at + 90*ms, Bytes: 40, Text: ", 3"}},
			FinishReason: text, Notes: text})
	}
	recs = append(recs, trace.Record{ID: "fail", Index: 6, InputTokens: 100, MaxTokens: 4, Done: 5 * ms, Status: 500,
		Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: text, Body: text}})
	p := filepath.Join(dir, name)
	writeTrace(t, p, h, recs)
	return p
}

// TestReportEscapesServerStrings: `llmreplay report` on a trace whose
// model id, label, server address, finish reasons, notes and error message
// hold escape sequences, bidi controls and HTML writes a page with none of
// them raw: each is shown as a visible escape (as the terminal shows it)
// and the HTML as text. Before the fix html/template escaped the HTML but
// passed the control and bidi characters into the page.
func TestReportEscapesServerStrings(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := spoofTrace(t, dir, "spoof.trace.zst", spoofID, spoofID)
	page := filepath.Join(dir, "r.html")
	out, e, code := run(t, nil, bin, "report", tr, "-o", page)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, e)
	}
	checkNoSpoof(t, "report's stdout and stderr", out+e)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	checkNoSpoof(t, "the HTML page", html)
	if strings.Contains(html, "<script>") {
		t.Error("the page holds the model id's <script> as markup")
	}
	shown := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(spoofShown)
	for _, want := range []string{
		"<dt>model</dt><dd>" + shown + "</dd>",
		"<dt>label</dt><dd>" + shown + "</dd>",
		"<dt>server</dt><dd>http://127.0.0.1:1/" + shown + "</dd>",
		`data-name="` + shown[:strings.Index(shown, "&lt;")], // a chart's series, drawn by hand (attribute context)
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// TestAnalyzeCSVEscapes: `analyze --format csv` writes the label (by
// default the server's model id) with its escape sequences and bidi
// controls as visible escapes, the way the table does; and a label that a
// spreadsheet would run as a formula (= + - @) is written as text, behind
// an apostrophe, "-Inf" included (a number to Go, a formula to a
// spreadsheet). The numbers are unchanged. Before the fix the cell held
// the raw characters.
func TestAnalyzeCSVEscapes(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	formula := `=HYPERLINK("http://evil.example/","click")`
	a := spoofTrace(t, dir, "a.trace.zst", spoofID, spoofID)
	f := spoofTrace(t, dir, "f.trace.zst", formula, "plain-model")
	at := spoofTrace(t, dir, "at.trace.zst", "@SUM(1+1)", "plain-model")
	// Go parses "-Inf" as a number; a spreadsheet takes it for a formula.
	inf := spoofTrace(t, dir, "inf.trace.zst", "-Inf", "plain-model")
	out, e := mustRun(t, bin, "analyze", "--format", "csv", a, f, at, inf)
	checkNoSpoof(t, "the CSV", out)
	checkNoSpoof(t, "analyze's stderr", e)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, out)
	}
	labels := map[string]bool{}
	for _, r := range rows[1:] {
		labels[r[0]] = true
		if r[1] != "2" || r[10] != "6" || r[11] != "1" {
			t.Errorf("row %q: concurrency, ok, failed %s, %s, %s; want 2, 6, 1", r[0], r[1], r[10], r[11])
		}
	}
	for _, want := range []string{spoofShown, "'" + formula, "'@SUM(1+1)", "'-Inf"} {
		if !labels[want] {
			t.Errorf("no row labelled %q in\n%s", want, out)
		}
	}
	if rows[0][10] != "requests_ok" || rows[0][11] != "requests_failed" {
		t.Fatalf("columns moved: %v", rows[0])
	}
}

// TestJSONOutputsEscapeBidi: `trace cat` (records, --no-chunks,
// --requests) and `analyze --format json` write the server's strings with
// every bidirectional and C1 control as a JSON \u escape, as encoding/json
// already writes C0 controls: nothing reorders a terminal showing them,
// and a program decoding the JSON still gets the exact string. Before the
// fix U+202E and the other bidi controls were written raw.
func TestJSONOutputsEscapeBidi(t *testing.T) {
	bin := parallelBinary(t)
	tr := spoofTrace(t, t.TempDir(), "s.trace.zst", spoofID, spoofID)
	for _, args := range [][]string{
		{"trace", "cat", tr},
		{"trace", "cat", "--no-chunks", tr},
		{"trace", "cat", "--requests", tr},
		{"analyze", "--format", "json", tr},
	} {
		name := strings.Join(args[:len(args)-1], " ")
		out, e, code := run(t, nil, bin, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, e)
		}
		checkNoSpoof(t, name, out)
		checkNoSpoof(t, name+" stderr", e)
		if !strings.Contains(out, `\u202eevil\u2066iso\u2069\u202a\u202b\u202c\u202d\u2067\u2068\u200e\u200f\u061c\u009b`) {
			t.Errorf("%s: the bidi controls are not \\u escapes: %.400s", name, out)
		}
		// Decoded, every string is the server's own.
		dec := json.NewDecoder(strings.NewReader(out))
		found := 0
		for {
			var v any
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: not JSON: %v", name, err)
			}
			found += countString(v, spoofID)
		}
		if found == 0 {
			t.Errorf("%s: no string decodes to the exact model id", name)
		}
	}
}

// countString counts the strings in a decoded JSON value equal to s.
func countString(v any, s string) int {
	switch x := v.(type) {
	case string:
		if x == s {
			return 1
		}
	case []any:
		n := 0
		for _, e := range x {
			n += countString(e, s)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range x {
			n += countString(e, s)
		}
		return n
	}
	return 0
}

// TestAPIKeyEnvUnset: every command that takes --api-key-env, given a
// variable that is unset or empty, exits 2 before sending anything, with
// one line naming the variable and the fix; a "name" that looks like a
// key (--api-key-env "$OPENAI_API_KEY") is refused without being
// repeated. Without the flag an unset OPENAI_API_KEY still means no key
// (local servers take none), and a set variable is sent as the bearer
// token. Before the fix the named-but-unset variable was ignored and the
// run went unauthenticated.
func TestAPIKeyEnvUnset(t *testing.T) {
	bin := parallelBinary(t)
	var mu sync.Mutex
	var auth []string
	var hits int // every request, of any kind
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		hits++
		mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			return // pre-warming, /metrics, /tokenize probes: not the workload's requests
		}
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"1, 2\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	posts := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auth...)
	}
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--input-tokens", "64", "--max-tokens", "2", "--schedule", "closed:1", "--requests", "2")
	// What each command needs besides the flag to get as far as sending;
	// a command that gains --api-key-env must be added here.
	common := []string{"--url", srv.URL, "--model", "m"}
	argsFor := map[string][]string{
		"replay":             append([]string{wl, "-o", filepath.Join(dir, "t.trace.zst")}, common...),
		"bench":              append([]string{"--results", dir, "--max-tokens", "2", "--repeats", "1"}, common...),
		"capacity":           append([]string{"--slo", "ttft_p90<=1s", "-o", filepath.Join(dir, "c.trace.zst")}, common...),
		"probe prefix-cache": common,
	}
	cmds := commandsWithFlag(NewRootCmd(io.Discard, io.Discard), "api-key-env")
	if len(cmds) < 4 {
		t.Fatalf("commands with --api-key-env: %v; want at least replay, bench, capacity, probe prefix-cache", cmds)
	}
	const secret = "sk-llmreplay-C-7e2b94d05a1c38f6"
	const upperHexKey = "F93A7C21D84B6E05A2C9F71B3D8E4A60"
	env := []string{"OPENAI_API_KEY=", "LLMREPLAY_C_EMPTY=", "LLMREPLAY_C_SPACE=  "}
	for _, c := range cmds {
		extra, ok := argsFor[c]
		if !ok {
			t.Errorf("%s takes --api-key-env: add the arguments it needs to this test", c)
			continue
		}
		base := append(strings.Fields(c), extra...)
		for _, v := range []string{"LLMREPLAY_C_UNSET", "LLMREPLAY_C_EMPTY", "LLMREPLAY_C_SPACE"} {
			out, e, code := run(t, env, bin, append(base, "--api-key-env", v)...)
			line := strings.TrimSpace(e)
			if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "--api-key-env "+v+": the environment variable "+v+" is not set or is empty") ||
				!strings.Contains(line, "export "+v+"=") || !strings.Contains(line, "drop --api-key-env") {
				t.Errorf("%s --api-key-env %s: exit %d, stderr %q; want 2 and one line naming %s and the fix", c, v, code, e, v)
			}
			if out != "" {
				t.Errorf("%s --api-key-env %s printed %q", c, v, out)
			}
		}
		// The key itself where its variable's name belongs: a mixed-case
		// one and an upper-case hex one, which is shaped like a name.
		for _, key := range []string{secret, upperHexKey} {
			out, e, code := run(t, env, bin, append(base, "--api-key-env", key)...)
			if code != 2 || strings.Count(strings.TrimSpace(e), "\n") != 0 || !strings.Contains(e, "not repeated here") {
				t.Errorf("%s --api-key-env KEY: exit %d, stderr %q; want 2 and one line", c, code, e)
			}
			if strings.Contains(out+e, key[3:]) {
				t.Errorf("%s --api-key-env KEY printed the key: %q", c, out+e)
			}
		}
	}
	mu.Lock()
	refused := hits
	mu.Unlock()
	if refused != 0 {
		t.Fatalf("the refused runs sent %d requests", refused)
	}
	// Nor wrote anything: no trace, no --results files, only the workload.
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 1 || ents[0].Name() != "w.workload.zst" {
		t.Fatalf("the refused runs left files in %s: %v (%v)", dir, ents, err)
	}
	// The working cases, through replay: the default variable unset sends
	// no key; a named, set variable is the bearer token.
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{env, nil, ""},
		{[]string{"OPENAI_API_KEY=", "LLMREPLAY_C_KEY=" + secret}, []string{"--api-key-env", "LLMREPLAY_C_KEY"}, "Bearer " + secret},
	} {
		mu.Lock()
		auth = nil
		mu.Unlock()
		args := append([]string{"replay", wl, "-o", filepath.Join(dir, "ok.trace.zst"), "--force"}, common...)
		out, e, code := run(t, c.env, bin, append(args, c.args...)...)
		if code != 0 {
			t.Fatalf("replay %v: exit %d\n%s%s", c.args, code, out, e)
		}
		p := posts()
		if len(p) != 2 {
			t.Fatalf("replay %v: %d requests reached the server, want 2", c.args, len(p))
		}
		for _, a := range p {
			if a != c.want {
				t.Errorf("replay %v sent Authorization %q, want %q", c.args, a, c.want)
			}
		}
	}
}

// commandsWithFlag lists, sorted, the commands under root ("bench",
// "probe prefix-cache") that have the flag: the test covers commands
// added later without being told.
func commandsWithFlag(root *cobra.Command, flag string) []string {
	var out []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup(flag) != nil {
			out = append(out, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(out)
	return out
}

// TestEscapeLookalikeText: a server that sends the six characters \u202e
// (text, not the character) is shown with its backslash doubled, so a
// person can tell it from a server that sent U+202E itself, which is shown
// as \u202e. Before, both printed the same.
func TestEscapeLookalikeText(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	fake := spoofTrace(t, dir, "fake.trace.zst", "", `fake\u202e`)
	real := spoofTrace(t, dir, "real.trace.zst", "", "fake\u202e")
	show := func(p string) string {
		o, _ := mustRun(t, bin, "trace", "info", p)
		return o
	}
	if o := show(fake); !strings.Contains(o, `fake\\u202e`) {
		t.Errorf("the text \\u202e is not shown with its backslash doubled:\n%s", o)
	}
	if o := show(real); !strings.Contains(o, `fake\u202e`) || strings.Contains(o, `fake\\u202e`) || strings.ContainsRune(o, '\u202e') {
		t.Errorf("U+202E is not shown as \\u202e:\n%s", o)
	}
}

// hostileID is a hostile server's model id: it clears the screen, sets
// the terminal title and adds a fake result line when printed raw.
const hostileID = "evil\x1b[2J\x1b]0;TITLE\x07\nFAKE LINE: 999999 tok/s\r"

// TestServerStringsEscaped: a server whose model id and finish_reason are
// hostile; bench, trace info and analyze (table and Markdown) and the
// bench's .md file show them escaped, while the trace keeps them raw.
// Before the fix each printed them raw.
func TestServerStringsEscaped(t *testing.T) {
	bin := parallelBinary(t)
	idJSON, _ := json.Marshal(hostileID)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet && r.URL.Path != "/v1/models" {
			return
		}
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model"}]}`, idJSON)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(w, "data: {\"model\":%s,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d, \"},\"finish_reason\":null}]}\n\n", idJSON, i)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%s}]}\n\ndata: [DONE]\n\n", idJSON)
	}))
	defer srv.Close()
	dir := t.TempDir()
	check := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Errorf("%s printed a raw control character: %q", what, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "FAKE LINE") {
				t.Errorf("%s printed the fake line on its own: %q", what, out)
			}
		}
	}
	o, e, code := run(t, nil, bin, "bench", "--url", srv.URL, "--results", dir, "--max-tokens", "4")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, o, e)
	}
	check("bench", o+e)
	if !strings.Contains(o, `evil\x1b[2J`) {
		t.Errorf("bench does not show the escaped model id: %q", o)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.trace.zst"))
	mds, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	if len(traces) != 1 || len(mds) != 1 {
		t.Fatalf("bench left %v and %v", traces, mds)
	}
	md, _ := os.ReadFile(mds[0])
	check("the bench .md", string(md))
	// Every row of the Markdown table has as many cell separators as its
	// header: the model id's text cannot add cells or rows.
	cells := -1
	for _, l := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		n := strings.Count(l, "|") - strings.Count(l, `\|`)
		if cells < 0 {
			cells = n
		} else if n != cells {
			t.Errorf("a table row has %d separators, the header %d: %q", n, cells, l)
		}
	}
	for _, args := range [][]string{
		{"trace", "info", traces[0]},
		{"analyze", traces[0]},
		{"analyze", "--format", "markdown", traces[0]},
	} {
		o, e, code := run(t, nil, bin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		check(strings.Join(args[:2], " "), o+e)
		if !strings.Contains(o, `evil\x1b[2J`) {
			t.Errorf("%v does not show the escaped model id: %q", args, o)
		}
	}
	// The trace keeps the raw value.
	o, _, _ = run(t, nil, bin, "trace", "cat", traces[0])
	if !strings.Contains(o, string(idJSON[1:len(idJSON)-1])) {
		t.Errorf("trace cat lost the raw model id: %.300q", o)
	}
}

// TestReplayBoundsModelAndLabel: replay takes a model id and a label of at
// most safetext.MaxName bytes. A longer --model or --label is bad input
// (exit 2, one line naming the flag and the bound), and a server whose
// model list names a 1 MB model is refused before anything is sent, with
// the fix (--model). Before the fix the 1 MB id went into the trace
// header, and from there into every table, report and CSV row.
func TestReplayBoundsModelAndLabel(t *testing.T) {
	bin := parallelBinary(t)
	huge := strings.Repeat("m", 1_000_000) // the model list itself is read up to 1 MiB
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/models" {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, huge)
			return
		}
		if r.Method == http.MethodPost {
			posts++
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	wl := smallWorkload(t, bin)
	dir := t.TempDir()
	long := strings.Repeat("x", safetext.MaxName+1)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", long}, []string{"--model", fmt.Sprint(safetext.MaxName)}},
		{[]string{"--model", "m", "--label", long}, []string{"--label", fmt.Sprint(safetext.MaxName)}},
		{nil, []string{"model", "1000000 bytes", "--model"}},
	} {
		tr := filepath.Join(dir, fmt.Sprintf("t%d.trace.zst", len(c.want)+len(c.args)))
		_, e, code := run(t, nil, bin, append([]string{"replay", wl, "--url", srv.URL, "-o", tr}, c.args...)...)
		if code != 2 {
			t.Errorf("%.40q: exit %d, want 2: %.300s", c.args, code, e)
		}
		oneLine(t, fmt.Sprintf("%.40q", c.args), e, c.want...)
		if len(e) > 2000 {
			t.Errorf("%.40q: the error is %d bytes long", c.args, len(e))
		}
		if _, err := os.Stat(tr); err == nil {
			t.Errorf("%.40q: a trace was written", c.args)
		}
	}
	if posts != 0 {
		t.Errorf("%d requests were sent to a server whose model id is refused", posts)
	}
	// At the bound, both are taken.
	atBound := strings.Repeat("y", safetext.MaxName)
	tr := filepath.Join(dir, "ok.trace.zst")
	if _, e, code := run(t, nil, bin, "replay", wl, "--url", startSim(t, bin), "--model", atBound, "--label", atBound, "-o", tr); code != 0 {
		t.Fatalf("a model and label of %d bytes: exit %d: %s", safetext.MaxName, code, e)
	}
}

// TestLongNamesCutWhenShown: a hand-made trace with a 1 MB model id and a
// 2 MB label (which replay would refuse) makes output of bounded size:
// analyze (text, CSV, JSON), report and export show each cut at
// safetext.MaxName bytes with how much was cut. Before the fix the report
// was 50 MB and export's chunks.csv repeated the 2 MB label on every row.
func TestLongNamesCutWhenShown(t *testing.T) {
	bin, dir := parallelBinary(t), t.TempDir()
	tr := filepath.Join(dir, "long.trace.zst")
	model, label := strings.Repeat("M", 1<<20), strings.Repeat("L", 2<<20)
	writeReportTrace(t, tr, label, model, 2, 1, 1, 4)
	const bound = 256 << 10 // what the same trace gives with short names, and then some
	check := func(what string, out []byte) {
		t.Helper()
		if len(out) > bound {
			t.Errorf("%s: %d bytes of output from a %d-byte label", what, len(out), len(label))
		}
		if strings.Contains(string(out), strings.Repeat("L", safetext.MaxName+1)) || strings.Contains(string(out), strings.Repeat("M", safetext.MaxName+1)) {
			t.Errorf("%s: a name is shown longer than %d bytes", what, safetext.MaxName)
		}
	}
	for _, format := range []string{"table", "csv", "json", "markdown"} {
		o, e, code := run(t, nil, bin, "analyze", "--format", format, tr)
		if code != 0 {
			t.Fatalf("analyze --format %s: exit %d: %.300s", format, code, e)
		}
		check("analyze --format "+format, []byte(o+e))
		if !strings.Contains(o+e, "more bytes") {
			t.Errorf("analyze --format %s does not say the label was cut", format)
		}
	}
	page := filepath.Join(dir, "r.html")
	if o, e, code := run(t, nil, bin, "report", tr, "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %.300s", code, e)
	} else {
		check("report's output", []byte(o+e))
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	check("the report", b)
	out := filepath.Join(dir, "tables")
	if o, e, code := run(t, nil, bin, "export", "--format", "csv", "-o", out, tr); code != 0 {
		t.Fatalf("export: exit %d: %.300s", code, e)
	} else {
		check("export's output", []byte(o+e))
	}
	for _, f := range []string{"requests.csv", "chunks.csv", "runs.csv"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		check(f, b)
	}
	// The trace itself is kept as it was: the cut is in what is shown.
	if h, _ := readTrace(t, tr); h.Label != label || h.Model != model {
		t.Error("the trace's own label or model changed")
	}
}
