//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDocsExamplesRun runs every fenced shell example of README.md and
// docs/*.md the way a reader would type it: through the built binary
// (`llmreplay` on PATH, `go run ./cmd/llmreplay` meaning the same), one
// shell per example, in a fresh folder per document where the repository's
// traces/ and workload/ are at hand, so the documents' paths work. A
// `llmreplay sim --addr A` line starts the simulator on a free loopback
// port, and A in the document's later commands means that port. An example
// passes when each command exits with the status the document implies (0
// unless listed below) and every line it shows as output that is words
// alone (no digit, no …: measured values differ run to run), or that is
// workload build's deterministic "wrote" line, is in what it printed. An
// example that cannot run here, or runs shortened, is listed in
// docExampleRules with the reason; a rule that names no example
// any more fails the test, so the list cannot go stale.
func TestDocsExamplesRun(t *testing.T) {
	bin := parallelBinary(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	used := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		examples := docExamples(t, f, rel)
		if len(examples) == 0 {
			continue
		}
		for _, ex := range examples {
			_, ok := docExampleRules[ex.key]
			used[ex.key] = used[ex.key] || ok
		}
		// The documents run side by side: most of their time is the
		// simulator's real-time pace, not CPU.
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, d := range []string{"traces", "workload"} {
				if err := os.Symlink(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
					t.Fatal(err)
				}
			}
			sims := map[string]string{} // the document's address → the simulator's
			for _, ex := range examples {
				rule := docExampleRules[ex.key]
				if rule.why != "" {
					t.Logf("%s:%d not run: %s", ex.file, ex.line, rule.why)
					continue
				}
				start := time.Now()
				runDocExample(t, bin, dir, ex, rule, sims)
				t.Logf("%s:%d ran in %s", ex.file, ex.line, time.Since(start).Round(time.Millisecond))
			}
		})
	}
	for key := range docExampleRules {
		if !used[key] {
			t.Errorf("docExampleRules names %q, which no document shows any more", key)
		}
	}
}

// docExample is one fenced shell example: its commands and, for a
// transcript ("$ " lines), the output shown under each.
type docExample struct {
	file, key string
	line      int
	cmds      []docCommand
}

type docCommand struct {
	text  string
	shown []string
}

// exampleRule says how an example is run when it cannot run as written.
type exampleRule struct {
	why     string            // the whole example is not run here, and why
	skip    map[string]string // a command starting with this is not run: why
	shorten [][2]string       // replacements that make a long example short (or keep its files in the test's folder); the comment beside the rule says why
	standIn []string          // simulator flags for a server the example names but does not start
	setup   string            // a shell line making the files the example assumes
	codes   map[string][]int  // a command starting with this may end with these statuses (its verdict)
}

// toolWords are the programs besides llmreplay the examples use; a command
// needing one that this machine lacks is skipped, said in the log.
var toolWords = []string{"jq", "duckdb", "python3", "zstd", "chromium", "curl"}

var verdictCodes = []int{0, 1, 3} // holds / does not hold / inconclusive

// docExampleRules, keyed by document and the example's first command
// (without its comment, spaces squeezed): what is not run, and why, and
// what runs shortened.
var docExampleRules = map[string]exampleRule{
	"README.md: go install ./cmd/llmreplay": {
		skip: map[string]string{"go install": notInstalled},
	},
	// The fresh-machine commands and bench's transcript.
	"README.md: go run ./cmd/llmreplay bench": {
		skip: map[string]string{
			"go run ./cmd/llmreplay bench": "TestPromiseREADMEBench runs it as written and checks its output",
			"go test":                      "the test suite itself",
		},
	},
	"README.md: llama-server -hf unsloth/Qwen3.5-2B-GGUF:Q4_K_M -ngl 99 -c 65536 -np 32 --port 8080": {
		skip: map[string]string{"llama-server": "needs a GPU and the model: the simulator stands in for it"},
		// Shortened: the full sweep takes minutes; two levels, one run each.
		shorten: [][2]string{{"--concurrency 1,4,8,16,32", "--concurrency 1,2 --repeats 1 --max-tokens 16"}},
		standIn: fastStandIn,
	},
	"README.md: llmreplay workload build --schedule burst:1,4,8,16,32 --repeats 6 -o sweep.workload.zst": {
		// Shortened: TestREADMEPipelineGivesVerdicts runs the full sizes
		// (its verdicts need the 6 repeats); here two levels, one run.
		shorten: [][2]string{{"--schedule burst:1,4,8,16,32 --repeats 6", "--schedule burst:1,2 --repeats 1 --max-tokens 16"}},
		standIn: fastStandIn,
		codes:   map[string][]int{"llmreplay check": verdictCodes},
	},
	"README.md: llmreplay capacity --profile llamacpp-rtx5090-q4km --time-scale 0.1 --slo 'ttft_p90<=1s' -q -o cap.trace.zst": {
		why: "TestREADMECapacityExample runs it as written and compares its output (a search of about a minute)",
	},
	"README.md: llmreplay analyze cap.trace.zst --capacity-slo 'ttft_p90<=700ms'": {
		why: "TestREADMECapacityExample runs it on the search it ran and compares its output",
	},
	"README.md: llmreplay selftest --short": {
		why: "about a minute on a busy machine; selftest's TestShort runs the same plan, and TestSelftestNoiseFloorBinary and TestSelftestStampsTLSBinary run its sections through the binary",
	},
	"docs/GUIDE.md: llmreplay sim --quadratic-prefill 80ns --addr 127.0.0.1:8080 &": {
		// Shortened: the 10,000-token prompts take 4 s each at the
		// profile's pace; a tenth of every duration, the fault's
		// included, keeps the same exponents.
		shorten: [][2]string{{"--quadratic-prefill 80ns", "--quadratic-prefill 80ns --time-scale 0.1"}},
	},
	"docs/CAPACITY.md: llmreplay capacity --url http://127.0.0.1:8000 --slo 'ttft_p90<=1s'": {
		why: "a summary of the forms with placeholders (…, NAME); TestREADMECapacityExample, TestAgainstTheModel/CapacityRateAgainstModel, TestBenchFindCapacity and TestAnalyzeCapacityTrace run each form",
	},
	"docs/CAPACITY.md: go test -run '^$' -bench 'CapacityCoverage|RateCoverage' -benchtime 60x -timeout 150m ./capacity/live/": {
		why: "the coverage benchmarks: hours of real-time searches, run by hand",
	},
	"docs/DISTRIBUTED.md: llmreplay trace merge results/shard-*.trace.zst -o merged.trace.zst": {
		why: "the command's form; the local run below makes its shards and merges them",
	},
	"docs/DISTRIBUTED.md: llmreplay analyze --wide merged.trace.zst": {
		skip: map[string]string{"llmreplay analyze --wide single.trace.zst": "the unsharded run it compares with is not among the page's commands"},
	},
	"docs/DISTRIBUTED.md: podman build -t registry.example/llmreplay:latest -f Containerfile .": {
		why: "needs podman and a registry",
	},
	"docs/DISTRIBUTED.md: kubectl apply -f job.yaml": {why: needsCluster},
	"docs/DISTRIBUTED.md: kubectl run copy --image=busybox --restart=Never --overrides='{\"spec\":{\"volumes\":[{\"name\":\"r\",\"persistentVolumeClaim\":{\"claimName\":\"llmreplay-results\"}}],\"containers\":[{\"name\":\"copy\",\"image\":\"busybox\",\"command\":[\"sleep\",\"3600\"],\"volumeMounts\":[{\"name\":\"r\",\"mountPath\":\"/results\"}]}]}}'": {why: needsCluster},
	"docs/DISTRIBUTED.md: llmreplay trace merge run1/shard-*.trace.zst -o run1/merged.trace.zst": {
		why: "merges the traces a cluster's Job wrote",
	},
	"docs/EXPORT.md: duckdb -c \"SELECT r.label, r.concurrency, median(r.per_stream_tps) AS per_stream, (SELECT median(aggregate_tps) FROM 'out/runs.parquet' u WHERE u.label = r.label AND u.concurrency = r.concurrency) AS aggregate, median(r.ttft_ms) AS ttft_p50 FROM 'out/requests.parquet' r WHERE r.ok AND NOT r.warmup GROUP BY ALL ORDER BY ALL\"": {
		setup: "llmreplay export traces/samples/vllm-rtx5090-bf16.trace.zst traces/samples/llamacpp-rtx5090-q4km.trace.zst --format parquet -o out/",
	},
	"docs/GUIDE.md: llmreplay check --accept-point traces/samples/vllm-rtx5090-bf16.trace.zst --claims traces/claims/vllm-rtx5090-bf16.claims": {
		codes: map[string][]int{"llmreplay check": verdictCodes},
	},
	"docs/GUIDE.md: go run ./cmd/llmreplay report vllm=traces/samples/vllm-rtx5090-bf16.trace.zst": {
		skip: map[string]string{"chromium": "rewrites the screenshot in the repository; TestReportInBrowser drives the browser"},
		// The page goes to the test's folder, not to a /tmp another run shares.
		shorten: [][2]string{{"-o /tmp/report.html", "-o report.html"}},
	},
	"docs/PERFORMANCE.md: llmreplay selftest": {
		why: "the full harness takes about half an hour and a section minutes; the README's selftest --short runs here and go test ./selftest in the suite",
	},
	"docs/PERFORMANCE.md: cat /proc/loadavg; nice -n -20 llmreplay selftest --section 1,3,4,5,6 --repeat 3 --floor-wakeups 5000 -o full.txt; cat /proc/loadavg": {
		why: "the quiet-machine measurement, about eight minutes",
	},
	"docs/PERFORMANCE.md: llmreplay sim --addr 127.0.0.1:18484 --profile fast --overrun 1000 --token-interval 100ms &": {
		why: "a memory measurement: 2,000 streams for about a minute",
	},
	"docs/PROBES.md: llmreplay probe prefix-cache": {
		codes: map[string][]int{"llmreplay probe prefix-cache --no-prefix-cache": {1}},
	},
	"docs/PROBES.md: llmreplay probe prefix-cache --mode shared-system": {
		codes: map[string][]int{"llmreplay probe prefix-cache --mode shared-system --no-prefix-cache": {1}},
	},
	"docs/SERVERS.md: go install ./cmd/llmreplay": {
		skip: map[string]string{"go install": notInstalled},
	},
	"docs/SERVERS.md: export OPENAI_API_KEY=KEY": {
		why: "a placeholder server (https://host) that needs a key",
	},
	"docs/SERVERS.md: llmreplay replay w.workload.zst --url http://127.0.0.1:8000": {
		setup:   "llmreplay workload build --schedule burst:1 --repeats 1 --max-tokens 8 -o w.workload.zst",
		standIn: fastStandIn,
	},
	"docs/SIMULATOR.md: go test -race ./sim/": {
		why: "the simulator's own tests and benchmarks, which go test ./... runs",
	},
	"docs/WORKLOAD_FORMAT.md: llmreplay workload cat seeds.workload.zst > seeds.jsonl": {
		setup: "llmreplay workload build --schedule burst:1,2 --repeats 1 -o seeds.workload.zst",
	},
}

const (
	notInstalled = "installs into the user's GOPATH; this test runs the binary built from the same package"
	needsCluster = "needs a Kubernetes cluster"
)

// fastStandIn is the simulator standing in for a server an example names
// but does not start: no modelled delay, paced so that streams stream.
var fastStandIn = []string{"--profile", "fast", "--token-interval", "1ms"}

var (
	fenceRE   = regexp.MustCompile("^( *)```(\\w*)")
	commandRE = regexp.MustCompile(`^(\$ |llmreplay |go |duckdb |curl |chromium |kubectl |podman |export |[A-Z_]+=\S* )`)
	docAddrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// docExamples returns the shell examples of one document: fenced blocks
// marked sh (or bash, shell, console), and unmarked ones whose first line
// is a command or that hold a "$ " prompt.
func docExamples(t *testing.T, path, rel string) []docExample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, lang, start := m[1], m[2], i+1
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if len(body) == 0 {
			continue
		}
		shell := lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
		prompt := false
		for _, l := range body {
			prompt = prompt || strings.HasPrefix(l, "$ ")
		}
		if !shell && (lang != "" || !commandRE.MatchString(body[0]) && !prompt) {
			continue
		}
		ex := docExample{file: rel, line: start, cmds: docCommands(body)}
		if len(ex.cmds) == 0 {
			continue
		}
		ex.key = rel + ": " + exampleKey(ex.cmds[0].text)
		out = append(out, ex)
	}
	return out
}

// docCommands splits a block into commands. In a transcript the commands
// are the "$ " lines and the lines under each are its output; otherwise
// every line is a command but comments, a trailing \ joins the next line,
// and a for/while/if runs to its done/fi.
func docCommands(body []string) []docCommand {
	transcript := false
	for _, l := range body {
		if strings.HasPrefix(l, "$ ") {
			transcript = true
		}
	}
	var cmds []docCommand
	for i := 0; i < len(body); i++ {
		l := body[i]
		if transcript {
			if !strings.HasPrefix(l, "$ ") {
				if len(cmds) > 0 {
					cmds[len(cmds)-1].shown = append(cmds[len(cmds)-1].shown, l)
				}
				continue
			}
			l = strings.TrimPrefix(l, "$ ")
		} else if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		text := l
		for strings.HasSuffix(strings.TrimSpace(text), "\\") && i+1 < len(body) {
			i++
			text += "\n" + body[i]
		}
		if f := strings.Fields(text); len(f) > 0 && (f[0] == "for" || f[0] == "while" || f[0] == "if") {
			for i+1 < len(body) && !regexp.MustCompile(`(^|;\s*)(done|fi)\b`).MatchString(strings.TrimSpace(body[i])) {
				i++
				text += "\n" + body[i]
			}
		}
		cmds = append(cmds, docCommand{text: text})
	}
	return cmds
}

var simLineRE = regexp.MustCompile(`^llmreplay sim .*--addr`)

// runDocExample runs one example's commands in one shell in dir and checks
// each command's exit status and shown output.
func runDocExample(t *testing.T, bin, dir string, ex docExample, rule exampleRule, sims map[string]string) {
	t.Helper()
	where := fmt.Sprintf("%s:%d", ex.file, ex.line)
	var script strings.Builder
	script.WriteString("set -o pipefail\nexec 2>&1\n")
	if rule.setup != "" {
		fmt.Fprintf(&script, "%s >/dev/null || exit 99\n", rule.setup)
	}
	var run []docCommand
	for _, c := range ex.cmds {
		text := strings.Replace(c.text, "go run ./cmd/llmreplay ", "llmreplay ", 1)
		if why := ruleSkip(rule, c.text); why != "" {
			t.Logf("%s: %q not run: %s", where, c.text, why)
			continue
		}
		for _, r := range rule.shorten {
			text = strings.ReplaceAll(text, r[0], r[1])
		}
		if simLineRE.MatchString(text) {
			startDocSim(t, bin, where, text, sims)
			continue
		}
		if tool := missingTool(text); tool != "" {
			t.Logf("%s: %q not run: %s is not installed here", where, text, tool)
			continue
		}
		for _, addr := range docAddrRE.FindAllString(text, -1) {
			if _, ok := sims[addr]; !ok && rule.standIn != nil {
				u := startSim(t, bin, rule.standIn...)
				sims[addr] = strings.TrimPrefix(u, "http://")
			}
		}
		for from, to := range sims {
			text = strings.ReplaceAll(text, from, to)
		}
		n := len(run)
		fmt.Fprintf(&script, "echo '@@cmd %d'\n%s\necho \"@@rc %d $?\"\n", n, text, n)
		run = append(run, docCommand{text: text, shown: c.shown})
	}
	if len(run) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("%s: the example did not finish in 4 minutes:\n%s", where, out)
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 99 {
		t.Fatalf("%s: the setup %q failed:\n%s", where, rule.setup, out)
	}
	outputs, codes := splitDocOutput(string(out))
	for i, c := range run {
		code, ok := codes[i]
		if !ok {
			t.Errorf("%s: %q did not finish (the shell ended):\n%s", where, c.text, out)
			break
		}
		if !allowedCode(rule, c.text, code) {
			t.Errorf("%s: %q exited %d:\n%s", where, c.text, code, outputs[i])
			continue
		}
		got := squeezeSpace(outputs[i])
		for _, l := range c.shown {
			// workload build's line is deterministic (its digest too), so
			// it is checked whole, figures and all.
			if l = squeezeSpace(l); l == "" || strings.ContainsAny(l, "0123456789…") && !strings.HasPrefix(l, "wrote ") {
				continue
			}
			if !strings.Contains(got, l) {
				t.Errorf("%s: %q shows %q, which the command did not print:\n%s", where, c.text, l, outputs[i])
			}
		}
	}
}

func ruleSkip(rule exampleRule, text string) string {
	for prefix, why := range rule.skip {
		if strings.HasPrefix(text, prefix) {
			return why
		}
	}
	return ""
}

func allowedCode(rule exampleRule, text string, code int) bool {
	want, longest := []int{0}, -1
	for prefix, codes := range rule.codes {
		if strings.HasPrefix(text, prefix) && len(prefix) > longest {
			want, longest = codes, len(prefix)
		}
	}
	for _, c := range want {
		if c == code {
			return true
		}
	}
	return false
}

// startDocSim starts the simulator a `llmreplay sim ... --addr A [&]` line
// asks for, with its flags, on a free port, and maps A to it.
func startDocSim(t *testing.T, bin, where, line string, sims map[string]string) {
	t.Helper()
	words := shellWords(t, strings.TrimSuffix(strings.TrimSpace(line), "&"))
	var args []string
	addr := ""
	for i := 2; i < len(words); i++ {
		if words[i] == "--addr" && i+1 < len(words) {
			addr = words[i+1]
			i++
			continue
		}
		args = append(args, words[i])
	}
	if addr == "" {
		t.Fatalf("%s: %q has no --addr value", where, line)
	}
	sims[addr] = strings.TrimPrefix(startSim(t, bin, args...), "http://")
}

func missingTool(text string) string {
	for _, tool := range toolWords {
		if regexp.MustCompile(`(^|[|;&(]\s*)` + tool + `\b`).MatchString(text) {
			if _, err := exec.LookPath(tool); err != nil {
				return tool
			}
		}
	}
	return ""
}

// splitDocOutput cuts the shell's output at the markers the script wrote
// around each command: each command's output and exit status.
func splitDocOutput(out string) (map[int]string, map[int]int) {
	outputs, codes := map[int]string{}, map[int]int{}
	cur := -1
	var buf strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Text()
		if n, ok := strings.CutPrefix(l, "@@cmd "); ok {
			cur, _ = strconv.Atoi(n)
			buf.Reset()
			continue
		}
		if rest, ok := strings.CutPrefix(l, "@@rc "); ok {
			f := strings.Fields(rest)
			if len(f) == 2 {
				i, _ := strconv.Atoi(f[0])
				c, _ := strconv.Atoi(f[1])
				codes[i], outputs[i] = c, buf.String()
			}
			continue
		}
		if cur >= 0 {
			buf.WriteString(l + "\n")
		}
	}
	return outputs, codes
}

// exampleKey is a command's first line without its comment, spaces
// squeezed: what a rule is keyed by.
func exampleKey(cmd string) string {
	first, _, _ := strings.Cut(cmd, "\n")
	if i := strings.Index(first, " #"); i >= 0 {
		first = first[:i]
	}
	return squeezeSpace(strings.TrimSuffix(strings.TrimSpace(first), "\\"))
}

func squeezeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
