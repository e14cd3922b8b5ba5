package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSpeak are the words of Go's parsers that a user should never read:
// they name a function, not the flag or the form it takes.
var goSpeak = []string{"strconv", "Atoi", "ParseInt", "ParseFloat", "ParseBool", "invalid syntax", "time: ", "invalid argument", "json: ", "looking for beginning", "unexpected end of JSON"}

// noGoSpeak fails the test when stderr holds any of goSpeak.
func noGoSpeak(t *testing.T, what, stderr string) {
	t.Helper()
	for _, g := range goSpeak {
		if strings.Contains(stderr, g) {
			t.Errorf("%s: stderr speaks Go (%q):\n%s", what, g, stderr)
		}
	}
}

// TestFlagValueErrorsTeach: a value a flag's type cannot hold is refused
// through the built binary in one line that names the flag, repeats the
// value and shows a form the flag takes (exit 2), never strconv's or
// time.ParseDuration's words; a misspelt flag or command gets the nearest
// real one, and a flag of another command says which commands have it.
func TestFlagValueErrorsTeach(t *testing.T) {
	bin := parallelBinary(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		// an int list given as a range: the flag, the value, the list form
		{[]string{"bench", "--concurrency", "1-8"}, []string{`--concurrency "1-8"`, "a range is not taken", "--concurrency 1,4,8,16"}},
		{[]string{"bench", "--concurrency", "eight"}, []string{`--concurrency "eight" is not a list of whole numbers`, "--concurrency 1,4,8,16"}},
		{[]string{"bench", "--max-tokens", "2.5"}, []string{`--max-tokens "2.5" is not a whole number`, "--max-tokens 256"}},
		{[]string{"bench", "--max-tokens", "99999999999999999999"}, []string{`--max-tokens "99999999999999999999" is too large`}},
		{[]string{"replay", "x.workload.zst", "--timeout", "5"}, []string{`--timeout "5" has no unit`, "5s", "5ms"}},
		{[]string{"replay", "x.workload.zst", "--idle-timeout", "soon"}, []string{`--idle-timeout "soon" is not a duration`, "--idle-timeout 1m"}},
		{[]string{"sim", "--time-scale", "fast"}, []string{`--time-scale "fast" is not a number`, "--time-scale 1"}},
		{[]string{"sim", "--error-rate", "5%"}, []string{`--error-rate "5%"`, "a fraction", "--error-rate 0.05"}},
		{[]string{"workload", "build", "--seed", "x"}, []string{`--seed "x" is not a whole number`}},
		{[]string{"analyze", "--wide=maybe", "x.trace.zst"}, []string{"--wide=maybe", "a switch", "--wide=false"}},
		{[]string{"bench", "--concurrency"}, []string{"--concurrency needs a value", "--concurrency 1,4,8,16"}},
		{[]string{"bench", "--label", "a", "--label", "b"}, []string{"--label", "given twice"}},
		// misspelt flags and commands
		{[]string{"bench", "--concurency", "4"}, []string{"unknown flag: --concurency", "did you mean --concurrency?"}},
		{[]string{"replay", "x.workload.zst", "--tokeniser", "o200k_base"}, []string{"did you mean --tokenizer?"}},
		{[]string{"replay", "x.workload.zst", "--input-tokens", "800"}, []string{"unknown flag: --input-tokens", "a flag of bench", "workload build", "not of replay"}},
		{[]string{"benc"}, []string{`unknown command "benc"`, "did you mean bench?", "llmreplay --help"}},
		{[]string{"workload", "buidl"}, []string{`unknown workload subcommand "buidl"`, "did you mean build?"}},
	} {
		refusedInWords(t, bin, c.args, c.want...)
	}
}

// TestWrongFileKindNamed: a workload given where a trace is read, a trace
// given where a workload is, or another file llmreplay writes (a Parquet
// table, a report) is named for what it is, with the command that takes
// it and the file's path, in one line (exit 2) — never "magic line".
func TestWrongFileKindNamed(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	wl := smallWorkload(t, bin)
	tr := filepath.Join("..", "..", "traces", "samples", "vllm-rtx5090-bf16.trace.zst")
	pq := filepath.Join(dir, "tables")
	mustRun(t, bin, "export", tr, "-o", pq)
	table := filepath.Join(pq, "requests.parquet")
	if _, err := os.Stat(table); err != nil {
		t.Fatal(err)
	}
	replayIt := "'llmreplay replay " + wl + " --url URL'"
	analyzeIt := "'llmreplay analyze " + tr + "'"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"analyze", wl}, []string{"workload file, not a trace", replayIt}},
		{[]string{"check", wl, "--claim", "ttft_p50 < 1s"}, []string{"workload file, not a trace", replayIt}},
		{[]string{"trace", "info", wl}, []string{"workload file, not a trace", replayIt}},
		{[]string{"export", wl, "-o", filepath.Join(dir, "x")}, []string{"workload file, not a trace", replayIt}},
		{[]string{"replay", tr, "--url", "http://127.0.0.1:9"}, []string{"trace file, not a workload", analyzeIt, "llmreplay workload build"}},
		{[]string{"workload", "inspect", tr}, []string{"trace file, not a workload", analyzeIt}},
		{[]string{"analyze", table}, []string{"not an llmreplay trace", "Parquet table (what export writes)"}},
		{[]string{"replay", table, "--url", "http://127.0.0.1:9"}, []string{"not a workload file", "Parquet table (what export writes)"}},
	} {
		what := strings.Join(c.args, " ")
		_, e, code := run(t, nil, bin, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", what, code, e)
		}
		oneLine(t, what, e, c.want...)
		if strings.Contains(e, "magic") || strings.Contains(e, "(is ") {
			t.Errorf("%s: %s", what, e)
		}
	}
}

// TestDeadServerSaidFirst: with nothing listening at --url, replay, bench
// and probe lead with the address and the refused connection, not with
// the setting that needed an answer (once "--model is empty …"); a run
// given --model records its refused requests and ends saying the server
// is not there.
func TestDeadServerSaidFirst(t *testing.T) {
	bin := parallelBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	wl := smallWorkload(t, bin)
	for _, args := range [][]string{
		{"replay", wl, "--url", url, "-o", filepath.Join(dir, "a.trace.zst")},
		{"replay", wl, "--url", url, "--api", "auto", "-o", filepath.Join(dir, "b.trace.zst")},
		{"bench", "--url", url, "--results", filepath.Join(dir, "results")},
		{"probe", "prefix-cache", "--url", url},
	} {
		what := strings.Join(args, " ")
		_, e, code := run(t, nil, bin, args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", what, code, e)
		}
		oneLine(t, what, e, "llmreplay: --url "+url+": no server answers there (connection refused: nothing listens on "+ln.Addr().String()+")", "start the server")
		noGoSpeak(t, what, e)
	}
	_, e, code := run(t, nil, bin, "replay", wl, "--url", url, "--model", "m", "-o", filepath.Join(dir, "c.trace.zst"))
	last := strings.TrimSpace(e)
	last = last[strings.LastIndex(last, "\n")+1:]
	if code != 1 || !strings.Contains(last, "every connection was refused, so no server listens at the address given: start the server, or correct --url") {
		t.Errorf("replay --model against a closed port: exit %d, last line %q", code, last)
	}
}

// TestParsedValueErrorsTeach: values the packages parse (JSON, sizes,
// names from a list, files) are refused like the flags' own types: the
// flag, the value and what to write instead, in one line, exit 2, no Go.
func TestParsedValueErrorsTeach(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	wl := smallWorkload(t, bin)
	sample := filepath.Join("..", "..", "traces", "samples", "vllm-rtx5090-bf16.trace.zst")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"replay", wl, "--url", "http://127.0.0.1:9", "--extra-body", "{bad"}, []string{"--extra-body is not a JSON object", `it stops being JSON at byte 2: "{b"`, "give one like"}},
		{[]string{"replay", wl, "--url", "http://127.0.0.1:9", "--extra-body", `{"top_k":20`}, []string{"--extra-body", "a closing } or \" is missing"}},
		{[]string{"workload", "build", "--input-tokens", "20", "-o", filepath.Join(dir, "w.zst")}, []string{"--input-tokens 20:", "use at least"}},
		{[]string{"capacity", "--slo", "ttft_p90<=2s", "--resume", filepath.Join(dir, "gone.trace.zst")}, []string{"--resume " + filepath.Join(dir, "gone.trace.zst") + ": no such file", "the capacity trace of the search"}},
		{[]string{"analyze", sample, "--by", "concurency"}, []string{`unknown grouping key "concurency" (did you mean concurrency?)`}},
		{[]string{"analyze", sample, "--definitions", "vlm"}, []string{`"vlm" (did you mean vllm?)`}},
		{[]string{"check", sample, "--claim", "ttft_p90 <= soon"}, []string{`bound "soon" is not a number`, "500ms or 2s"}},
		{[]string{"kube", "job", wl, "--image", "i", "--url", "http://x", "--shards", "2", "--results-claim", "c", "--retries", "-1"}, []string{"--retries -1 is negative", "give 0"}},
	} {
		refusedInWords(t, bin, c.args, c.want...)
	}
}

// refusedInWords runs bin with args and wants exit 2 and one line holding
// every one of want, in the user's words, not Go's.
func refusedInWords(t *testing.T, bin string, args []string, want ...string) {
	t.Helper()
	what := strings.Join(args, " ")
	_, e, code := run(t, nil, bin, args...)
	if code != 2 {
		t.Errorf("%s: exit %d, want 2: %s", what, code, e)
	}
	oneLine(t, what, e, want...)
	noGoSpeak(t, what, e)
}
