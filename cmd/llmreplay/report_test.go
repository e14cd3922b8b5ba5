package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/llmreplay/llmreplay/trace"
)

// hostileModel is what a server could call itself; the page must show it
// as text, never run it.
const hostileModel = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`

// writeReportTrace writes a burst trace per concurrency like
// writeAnalyzeTrace, with a model name chosen by the test and, per phase,
// `failed` requests that got HTTP 503. With failed > 0 the answers also
// stop at 8 of 16 max_tokens, which the analysis warns about.
func writeReportTrace(t *testing.T, path, label, model string, step float64, failed int, concurrencies ...int) {
	t.Helper()
	const n, ttft = 8, 50.0
	maxTok, finish := n, "length"
	if failed > 0 {
		maxTok, finish = 16, "stop"
	}
	h := trace.Header{Label: label, Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: model, API: "openai-chat"}
	for i, c := range concurrencies {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("burst-c%d", c), Kind: "burst", Concurrency: c, InputTokens: 800, MaxTokens: maxTok, Requests: c + failed})
	}
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	start := 1.0
	for i, c := range concurrencies {
		if label == "vllm" {
			// What vLLM's /metrics says mid-burst: c running, none
			// waiting, 10% of the KV cache per stream.
			w.WriteScrape(&trace.Scrape{T: int64((start + 20) * 1e6), Source: trace.SourceMetrics, Target: "http://127.0.0.1:8000/metrics",
				Samples: []trace.Sample{{Name: "vllm:num_requests_running", Value: float64(c)}, {Name: "vllm:num_requests_waiting", Value: 0},
					{Name: "vllm:kv_cache_usage_perc", Value: 0.1 * float64(c)}}})
		}
		for j := 0; j < c; j++ {
			rec := trace.Record{ID: fmt.Sprintf("p%d-%d", i, j), Phase: i, InputTokens: 800, MaxTokens: maxTok,
				Scheduled: int64(start * 1e6), Sent: int64(start * 1e6), Status: 200, FinishReason: finish,
				Usage: fmt.Sprintf(`{"completion_tokens":%d,"prompt_tokens":800}`, n)}
			countUpChunks(&rec, n, start, ttft, step)
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < failed; j++ {
			rec := trace.Record{ID: fmt.Sprintf("f%d-%d", i, j), Phase: i, InputTokens: 800, MaxTokens: n,
				Scheduled: int64(start * 1e6), Sent: int64(start * 1e6), Done: int64((start + 5) * 1e6), Status: 503,
				Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "<b>overloaded</b>"}}
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		start += 1000
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportCLI: the page is written by the command with default flags,
// escapes server strings, and says so when every request failed.
func TestReportCLI(t *testing.T) {
	dir := t.TempDir()
	fast, slow := filepath.Join(dir, "fast.trace.zst"), filepath.Join(dir, "slow.trace.zst")
	writeReportTrace(t, fast, "vllm", hostileModel, 2, 0, 1, 4, 8)
	writeReportTrace(t, slow, "llama", "m", 10, 1, 1, 4, 8)
	out := filepath.Join(dir, "report.html")
	stdout, stderr, err := runAnalyzeCLI(t, nil, "report", fast, slow, "-o", out)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, out) {
		t.Errorf("report does not print its path: %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") {
		t.Errorf("the model name reached the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Errorf("the model name is missing from the page")
	}
	for _, id := range []string{`id="sweep-per-stream"`, `id="sweep-aggregate"`, `id="ttft"`, `id="cdf-itl"`, `id="cdf-tpot"`} {
		if !strings.Contains(page, id) {
			t.Errorf("chart %s missing", id)
		}
	}
	// An existing file is not replaced without --force: exit 2, file kept.
	if _, _, err := runAnalyzeCLI(t, nil, "report", fast, "-o", out); err == nil || exitCode(err) != 2 {
		t.Errorf("existing -o: exit %d, want 2", exitCode(err))
	}
	// Without -o the page goes to report.html beside the trace, which
	// is this one: not replaced either.
	if _, _, err := runAnalyzeCLI(t, nil, "report", fast); err == nil || exitCode(err) != 2 {
		t.Errorf("no -o, report.html there: exit %d, want 2", exitCode(err))
	}

	// Only failed requests: the page says so and draws no chart.
	bad := filepath.Join(dir, "failed.trace.zst")
	writeReportTrace(t, bad, "down", "m", 2, 3)
	writeOnlyFailed(t, bad)
	out2 := filepath.Join(dir, "failed.html")
	if _, stderr, err := runAnalyzeCLI(t, nil, "report", bad, "-o", out2); err != nil {
		t.Fatalf("report of failed trace: %v\n%s", err, stderr)
	}
	b, _ = os.ReadFile(out2)
	if !strings.Contains(string(b), "Every one of the 3 requests failed") {
		t.Errorf("failed-only trace: the page does not say every request failed")
	}
	if strings.Contains(string(b), `class="chart"`) {
		t.Errorf("failed-only trace: the page draws empty charts")
	}
	// The timeline is what is left to see: three red rows with their class.
	if !strings.Contains(string(b), `data-rows="3" data-ticks="0" data-failed="3"`) || strings.Count(string(b), `<text class="failtext"`) != 3 {
		t.Errorf("failed-only trace: no timeline of the three failures")
	}
}

// TestReportDefaultPath, through the built binary: without -o, report
// writes report.html beside its (first) input and says where; it never
// replaces an existing file without --force, and never an input even with
// it (a trace named report.html, a label=path input named by -o): one line
// on stderr naming the file and the way out, exit 2, the file untouched.
func TestReportDefaultPath(t *testing.T) {
	bin := parallelBinary(t)
	dir := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "fast.trace.zst")
	writeReportTrace(t, tr, "vllm", "m", 2, 0, 1, 4)
	page := filepath.Join(dir, "report.html")
	out, e, code := run(t, nil, bin, "report", tr)
	if code != 0 || out != "report: "+page+"\n" {
		t.Fatalf("report without -o: exit %d, stdout %q, want %q\n%s", code, out, "report: "+page+"\n", e)
	}
	first, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(first), `id="summary"`) {
		t.Fatalf("no page with a summary at %s: %v", page, err)
	}
	oneLine := func(what, e string, code int, want ...string) {
		t.Helper()
		if code != 2 || strings.Count(e, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", what, code, e)
		}
		for _, w := range want {
			if !strings.Contains(e, w) {
				t.Errorf("%s: stderr %q does not say %q", what, e, w)
			}
		}
	}
	os.WriteFile(page, []byte("my notes"), 0o644)
	_, e, code = run(t, nil, bin, "report", "fast="+tr)
	oneLine("report.html exists", e, code, page, "--force")
	if b, _ := os.ReadFile(page); string(b) != "my notes" {
		t.Errorf("report replaced an existing file without --force")
	}
	if _, e, code = run(t, nil, bin, "report", tr, "--force"); code != 0 {
		t.Errorf("report --force: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), `id="summary"`) {
		t.Errorf("--force did not replace report.html")
	}

	// A trace that is itself named report.html is its own default output.
	other := filepath.Join(t.TempDir(), "report.html")
	writeReportTrace(t, other, "odd", "m", 2, 0, 1)
	orig, _ := os.ReadFile(other)
	for _, force := range [][]string{nil, {"--force"}} {
		_, e, code = run(t, nil, bin, append([]string{"report", other}, force...)...)
		oneLine(fmt.Sprintf("the input as output %v", force), e, code, "input")
	}
	// label=path is the file path: -o onto it is refused, --force or not.
	_, e, code = run(t, nil, bin, "report", "x="+tr, "-o", tr, "--force")
	oneLine("-o onto a label=path input", e, code, "input")
	if b, _ := os.ReadFile(other); !bytes.Equal(b, orig) {
		t.Errorf("a trace named report.html was replaced by its own report")
	}
	if _, err := os.Stat(tr); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run(t, nil, bin, "analyze", tr); code != 0 {
		t.Errorf("the trace no longer reads after report -o onto it: %s", e)
	}
}

// writeOnlyFailed rewrites path as one burst phase of three 503s.
func writeOnlyFailed(t *testing.T, path string) {
	t.Helper()
	h := trace.Header{Label: "down", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m",
		Phases: []trace.Phase{{Index: 0, Name: "burst-c3", Kind: "burst", Concurrency: 3, InputTokens: 800, MaxTokens: 8, Requests: 3}}}
	os.Remove(path)
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 3; j++ {
		rec := trace.Record{ID: fmt.Sprintf("f%d", j), InputTokens: 800, MaxTokens: 8, Scheduled: 1e6, Sent: 1e6, Done: 5e6,
			Status: 503, Error: &trace.Error{Class: trace.ErrHTTPStatus, Message: "overloaded"}}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// findChromium is the browser the test drives: Debian's chromium, or
// $CHROME.
func findChromium() string {
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInBrowser loads the report, written by the built binary with
// its default output path, in headless Chromium at 1280 px and in print,
// and checks what a person would see: the answers first (verdicts, the
// summary as one card per label and level with analyze's own figures, the
// warnings), then the charts on 1-2-5 ticks from zero with one colour per
// label and percentiles as line styles, then what was measured and the
// tables, none clipped; no console error, no request but the file itself,
// the hostile model name shown as text. It saves a screenshot at 1280 px
// (REPORT_SHOT names the file; default in the test's temp dir). Without a
// browser it skips locally and fails under CI=true.
func TestReportInBrowser(t *testing.T) {
	t.Parallel()
	chrome := findChromium()
	if chrome == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no Chromium: .ci/run installs it (apt-get install -y chromium)")
		}
		t.Skip("no Chromium found: install one (apt-get install -y chromium) or set CHROME=/path/to/chrome")
	}
	bin := builtBinary(t)
	dir := t.TempDir()
	fast, slow := filepath.Join(dir, "fast.trace.zst"), filepath.Join(dir, "slow.trace.zst")
	writeReportTrace(t, fast, "vllm", hostileModel, 2, 0, 1, 4, 8)
	writeReportTrace(t, slow, "llama", "m", 10, 1, 1, 4, 8)
	out := filepath.Join(dir, "report.html")
	if _, stderr, code := run(t, nil, bin, "report", fast, slow,
		"--claim", "per_stream_tps{label=vllm,concurrency=8} >= 100", "--claim", "per_stream_tps{label=llama,concurrency=8} >= 1000", "--accept-point"); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	summaryText, _, _ := run(t, nil, bin, "analyze", fast, slow)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	ctx, cancel3 := context.WithTimeout(ctx, 120*time.Second)
	defer cancel3()

	var mu sync.Mutex
	var consoleErrors, requests []string
	listenErr := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				consoleErrors = append(consoleErrors, fmt.Sprint(e.Args))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, e.ExceptionDetails.Text)
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	if listenErr != nil {
		if os.Getenv("CI") != "true" {
			t.Skipf("Chromium (%s) did not start: %v", chrome, listenErr)
		}
		t.Fatalf("CI=true and Chromium (%s) did not start: %v", chrome, listenErr)
	}
	url := "file://" + out
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("browser: %s: %v", what, err)
		}
	}
	_, err := chromedp.Run(ctx, chromedp.Navigate(url))
	step("navigate", err)
	_, err = chromedp.Run(ctx, chromedp.WaitReady(chromedp.CSS("body")))
	step("wait", err)
	title, err := chromedp.Run(ctx, chromedp.Title())
	step("title", err)
	headline, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("headline")))
	step("headline", err)
	measured, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("measured")))
	step("measured", err)
	body, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	step("body", err)
	sections, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("h2")].map(h => h.textContent)`))
	step("sections", err)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]string](`[...document.querySelectorAll("figure.chart")].map(f => ({
			id: f.id, series: String(f.querySelectorAll("g.series").length),
			points: String(f.querySelectorAll("circle.pt").length),
			declared: f.dataset.series + "/" + f.dataset.points,
			colours: [...f.querySelectorAll("g.series")].map(g => g.dataset.name + "=" + g.getAttribute("class").split(" ")[1]
				+ "=" + getComputedStyle(g.querySelector("path.line")).strokeDasharray).join(";"),
			yticks: [...f.querySelectorAll("text.tick.y")].map(e => e.textContent).join(","),
			legend: f.querySelector("ul.legend").textContent}))`))
	step("charts", err)
	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]string](`[...document.querySelectorAll("#summary article.card")].map(c => ({
			title: c.querySelector("h3").textContent, colour: c.className,
			tps: c.querySelector(".tps") ? c.querySelector(".tps").textContent : "",
			ttft: [...c.querySelectorAll("table.lat tbody tr")].filter(r => r.cells[0].textContent == "TTFT").map(r => [...r.cells].slice(1).map(x => x.textContent).join(" ")).join(""),
			border: getComputedStyle(c).borderTopColor}))`))
	step("cards", err)
	// Nothing is wider than the window, and no table is cut off inside its
	// box (the every-metric tables used to be clipped).
	overflow := func(what string) {
		t.Helper()
		clipped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const out = [];
			if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push("page " + document.documentElement.scrollWidth + " > " + window.innerWidth);
			for (const t of document.querySelectorAll("table")) {
				const box = t.parentElement;
				if (t.getBoundingClientRect().width > box.clientWidth + 1) out.push((t.closest("div,article").previousElementSibling || {}).textContent + ": " + t.getBoundingClientRect().width + " > " + box.clientWidth);
			}
			return out; })()`))
		step(what+" overflow", err)
		if len(clipped) > 0 {
			t.Errorf("%s: clipped or wider than the page: %q", what, clipped)
		}
	}
	overflow("1280 px")
	timelines, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]string](`[...document.querySelectorAll("figure.timeline")].map(f => ({
			title: f.querySelector("figcaption").textContent,
			rows: String(f.querySelectorAll("g.req").length),
			failed: String(f.querySelectorAll("g.req.failed").length),
			failtext: [...f.querySelectorAll("text.failtext")].map(e => e.textContent).join(","),
			xticks: [...f.querySelectorAll("text.tick")].filter(e => e.getAttribute("text-anchor") == "middle").map(e => e.textContent).join(","),
			ticks: String([...f.querySelectorAll("path.chunk")].reduce((n, p) => n + (p.getAttribute("d").match(/M/g) || []).length, 0))}))`))
	step("timelines", err)
	verdicts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#claims tbody tr")].map(r => r.cells[1].textContent)`))
	step("claims", err)
	tableText, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table")].map(t => [...t.querySelectorAll("th,td")].map(c => c.textContent).join("|"))`))
	step("tables", err)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	step("screenshot", err)
	shot := os.Getenv("REPORT_SHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

	// In print: A4's printable width at 96 dpi, the print style sheet.
	_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
	step("print media", err)
	_, err = chromedp.Run(ctx, chromedp.EmulateViewport(718, 1000))
	step("A4 width", err)
	overflow("print, A4")
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF())
	step("print to PDF", err)
	if !bytes.HasPrefix(pdf, []byte("%PDF")) || len(pdf) < 10000 {
		t.Errorf("printing gave %d bytes, not a PDF of the page", len(pdf))
	}

	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Errorf("console errors: %v", consoleErrors)
	}
	for _, r := range requests {
		if r != url {
			t.Errorf("the page asked the network for %s", r)
		}
	}
	if title == "pwned" {
		t.Errorf("the model name ran as a script")
	}
	if !strings.Contains(body, `<script>document.title="pwned"</script>`) {
		t.Errorf("the model name is not shown as text")
	}
	// The answers come first: verdicts, the summary, the warnings; then
	// the charts, the timelines, what was measured and the tables.
	wantOrder := []string{"Claims", "Summary", "Trust warnings", "Charts", "Timelines", "What was measured", "per-stream / aggregate output tok/s (definitions: llmreplay)", "Every metric: vllm", "Every metric: llama", "Evidence"}
	if strings.Join(sections, "|") != strings.Join(wantOrder, "|") {
		t.Errorf("sections in the order %q, want %q", sections, wantOrder)
	}
	for _, want := range []string{"vllm", "llama", "sha256:w"} {
		if !strings.Contains(measured, want) {
			t.Errorf("what was measured lacks %q", want)
		}
	}
	// The slow trace's early stops are a trust warning in the headline, and
	// its 503s are counted there by class.
	if !strings.Contains(headline, "responses stopped before max_tokens") || !strings.Contains(headline, "3 requests failed (http-status: 3)") {
		t.Errorf("headline shows no failure warning:\n%s", headline)
	}
	// One card per label and concurrency, level by level, each with the
	// figures analyze prints, in its label's colour.
	wantCards := []string{"vllm · concurrency 1", "llama · concurrency 1", "vllm · concurrency 4", "llama · concurrency 4", "vllm · concurrency 8", "llama · concurrency 8"}
	if len(cards) != len(wantCards) {
		t.Fatalf("%d summary cards, want %d: %v", len(cards), len(wantCards), cards)
	}
	for i, c := range cards {
		if c["title"] != wantCards[i] {
			t.Errorf("card %d is %q, want %q", i, c["title"], wantCards[i])
		}
		per, _, _ := strings.Cut(strings.TrimPrefix(c["tps"], "per stream "), " tok/s")
		if per == "" || !strings.Contains(summaryText, "tok/s  per stream "+per+"   aggregate") {
			t.Errorf("card %q shows per stream %q, which analyze's summary does not:\n%s", c["title"], per, summaryText)
		}
		if len(strings.Fields(c["ttft"])) != 4 {
			t.Errorf("card %q: TTFT at %q, want p50 p90 p95 p99", c["title"], c["ttft"])
		}
		if wantClass := []string{"card c0", "card c1"}[i%2]; c["colour"] != wantClass || c["border"] == cards[1-i%2]["border"] {
			t.Errorf("card %q: class %q border %s; want %s, its label's colour", c["title"], c["colour"], c["border"], wantClass)
		}
	}
	// Two labels × three concurrencies: two series of 3 points in the sweep
	// charts, six in TTFT (p50/p90/p99 per label), CDFs 2 series × 6 quantiles.
	want := map[string][2]string{
		"sweep-per-stream": {"2", "6"}, "sweep-aggregate": {"2", "6"}, "ttft": {"6", "18"},
		"cdf-itl": {"2", "12"}, "cdf-tpot": {"2", "12"},
		// The vllm trace's three scrapes: running and waiting, and KV usage.
		"server-queue": {"2", "6"}, "server-kv": {"1", "3"},
	}
	seen := map[string]bool{}
	for _, c := range charts {
		seen[c["id"]] = true
		w, ok := want[c["id"]]
		if !ok {
			t.Errorf("unexpected chart %s", c["id"])
			continue
		}
		if c["series"] != w[0] || c["points"] != w[1] {
			t.Errorf("chart %s: %s series, %s points drawn; want %s, %s", c["id"], c["series"], c["points"], w[0], w[1])
		}
		checkTicks(t, c["id"], c["yticks"])
		if !strings.Contains(c["legend"], "values in ") {
			t.Errorf("chart %s: the legend %q names no unit", c["id"], c["legend"])
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("chart %s missing", id)
		}
	}
	// TTFT: each label one colour across its percentiles, each percentile
	// one line style across labels.
	for _, c := range charts {
		if c["id"] != "ttft" {
			continue
		}
		style := map[string]string{}
		for _, s := range strings.Split(c["colours"], ";") {
			f := strings.SplitN(s, "=", 3)
			name, colour, dash := f[0], f[1], f[2]
			label, pct, _ := strings.Cut(name, " ")
			if want := map[string]string{"vllm": "s0", "llama": "s1"}[label]; colour != want {
				t.Errorf("ttft %s drawn in %s, want %s", name, colour, want)
			}
			if d, ok := style[pct]; ok && d != dash {
				t.Errorf("ttft %s dashed %q, other labels' %s %q", name, dash, pct, d)
			}
			style[pct] = dash
		}
		if style["p50"] != "none" || style["p90"] == "none" || style["p99"] == "none" || style["p90"] == style["p99"] {
			t.Errorf("ttft line styles %v: want p50 solid, p90 and p99 dashed differently", style)
		}
	}
	// One timeline per label and concurrency: vllm's 1, 4 and 8 requests of
	// 8 chunks; llama's the same plus one failed request (a 503, no chunk)
	// per level, drawn in red with its class.
	wantTL := []struct{ title, rows, failed, ticks string }{
		{"vllm, concurrency 1", "1", "0", "8"}, {"vllm, concurrency 4", "4", "0", "32"}, {"vllm, concurrency 8", "8", "0", "64"},
		{"llama, concurrency 1", "2", "1", "8"}, {"llama, concurrency 4", "5", "1", "32"}, {"llama, concurrency 8", "9", "1", "64"},
	}
	if len(timelines) != len(wantTL) {
		t.Fatalf("%d timelines drawn, want %d: %v", len(timelines), len(wantTL), timelines)
	}
	for i, w := range wantTL {
		g := timelines[i]
		if !strings.Contains(g["title"], w.title) || g["rows"] != w.rows || g["failed"] != w.failed || g["ticks"] != w.ticks {
			t.Errorf("timeline %d: %v, want %+v", i, g, w)
		}
		if w.failed != "0" && g["failtext"] != "http-status" {
			t.Errorf("timeline %d: failed rows labelled %q", i, g["failtext"])
		}
		checkTicks(t, g["title"], g["xticks"])
	}
	if len(verdicts) != 2 || verdicts[0] != "HOLDS" || verdicts[1] != "DOES NOT HOLD" {
		t.Errorf("claim verdicts on the page: %q", verdicts)
	}
	// Every table reads like the text tables: no separate _lo/_hi columns,
	// no raw digits.
	for _, tt := range tableText {
		for _, cell := range strings.Split(tt, "|") {
			if strings.HasSuffix(cell, "_lo") || strings.HasSuffix(cell, "_hi") || regexp.MustCompile(`\d\.\d{4,}`).MatchString(cell) {
				t.Errorf("a table cell %q: raw digits or an interval column", cell)
			}
		}
	}
}

// checkTicks: axis ticks from zero on whole steps of 1, 2 or 5 times a
// power of ten (0, 20, 40 …; never 103, 206, 309).
func checkTicks(t *testing.T, what, ticks string) {
	t.Helper()
	var vs []float64
	for _, s := range strings.Split(ticks, ",") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "k"), 64)
		if err != nil {
			t.Errorf("%s: tick %q is not a number", what, s)
			return
		}
		if strings.HasSuffix(s, "k") {
			v *= 1000
		}
		vs = append(vs, v)
	}
	if len(vs) < 3 || vs[0] != 0 {
		t.Errorf("%s: ticks %q do not start at 0", what, ticks)
		return
	}
	step := vs[1] - vs[0]
	mant := step / math.Pow(10, math.Floor(math.Log10(step)))
	if math.Abs(mant-1) > 1e-9 && math.Abs(mant-2) > 1e-9 && math.Abs(mant-5) > 1e-9 {
		t.Errorf("%s: tick step %g is not 1, 2 or 5 times a power of ten (%q)", what, step, ticks)
	}
	for i := 1; i < len(vs); i++ {
		if math.Abs(vs[i]-vs[i-1]-step) > 1e-9*math.Max(1, step) {
			t.Errorf("%s: uneven ticks %q", what, ticks)
			return
		}
	}
}

// writeInputSweep writes one request per input length at concurrency 1
// (a long-input sweep), each 8 one-token chunks 2 ms apart.
func writeInputSweep(t *testing.T, path string, inputs ...int) {
	t.Helper()
	h := trace.Header{Label: "long", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m"}
	for i, in := range inputs {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("input-%d", in), Kind: "burst", Concurrency: 1, InputTokens: in, MaxTokens: 8, Requests: 1})
	}
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		start := float64(1 + 1000*i)
		rec := trace.Record{ID: fmt.Sprintf("r%d", i), Phase: i, InputTokens: in, MaxTokens: 8, Scheduled: int64(start * 1e6), Sent: int64(start * 1e6),
			Status: 200, FinishReason: "length", Usage: `{"completion_tokens":8}`}
		countUpChunks(&rec, 8, start, 50, 2)
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeRateSweep writes one open-loop phase per rate, 6 requests each
// arriving 1/rate apart, 8 one-token chunks 2 ms apart.
func writeRateSweep(t *testing.T, path string, rates ...float64) {
	t.Helper()
	h := trace.Header{Label: "rates", Tokenizer: "o200k_base", WorkloadDigest: "sha256:w", Model: "m"}
	for i, r := range rates {
		h.Phases = append(h.Phases, trace.Phase{Index: i, Name: fmt.Sprintf("rate-%g", r), Kind: "rate", Rate: r, InputTokens: 100, MaxTokens: 8, Requests: 6})
	}
	w, err := trace.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	start := 1.0
	for i, r := range rates {
		for j := 0; j < 6; j++ {
			at := start + float64(j)*1000/r
			rec := trace.Record{ID: fmt.Sprintf("r%d-%d", i, j), Phase: i, InputTokens: 100, MaxTokens: 8, Scheduled: int64(at * 1e6), Sent: int64(at * 1e6),
				Status: 200, FinishReason: "length", Usage: `{"completion_tokens":8}`}
			countUpChunks(&rec, 8, at, 50, 2)
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		start += 10000
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportAxesAndSmallTraces: an input-length sweep at one concurrency is
// charted against input length (ticks at 100, 1000, 10k); a one-request
// trace says it has no intervals instead of pretending.
func TestReportAxesAndSmallTraces(t *testing.T) {
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sweep.trace.zst")
	writeInputSweep(t, sweep, 100, 1000, 10000)
	out := filepath.Join(dir, "sweep.html")
	if _, stderr, err := runAnalyzeCLI(t, nil, "report", sweep, "-o", out); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	b, _ := os.ReadFile(out)
	page := string(b)
	if !strings.Contains(page, "input length (tokens)") || strings.Contains(page, "concurrency (streams)") {
		t.Errorf("input-length sweep not charted against input length")
	}
	for _, tick := range []string{">100</text>", ">1000</text>", ">10k</text>"} {
		if !strings.Contains(page, tick) {
			t.Errorf("x tick %s missing", tick)
		}
	}

	// Open-loop phases at 2 and 5 requests/s: charted against the rate,
	// with a timeline per rate.
	rates := filepath.Join(dir, "rates.trace.zst")
	writeRateSweep(t, rates, 2, 5)
	out = filepath.Join(dir, "rates.html")
	if _, stderr, err := runAnalyzeCLI(t, nil, "report", rates, "-o", out); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	b, _ = os.ReadFile(out)
	page = string(b)
	for _, want := range []string{"request rate (requests/s)", "Timeline: rates, 2 requests/s", "Timeline: rates, 5 requests/s", `id="sweep-per-stream" data-series="1" data-points="2"`} {
		if !strings.Contains(page, want) {
			t.Errorf("rate sweep: the page lacks %q", want)
		}
	}
	if strings.Contains(page, "concurrency (streams)") {
		t.Errorf("rate sweep charted against concurrency")
	}

	one := filepath.Join(dir, "one.trace.zst")
	writeInputSweep(t, one, 500)
	out = filepath.Join(dir, "one.html")
	if _, stderr, err := runAnalyzeCLI(t, nil, "report", one, "-o", out); err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	b, _ = os.ReadFile(out)
	if !strings.Contains(string(b), "Only one request succeeded") {
		t.Errorf("one-request trace: the page does not say so")
	}
}
