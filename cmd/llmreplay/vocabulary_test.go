package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/export"
)

// synonyms are the other names people (and other tools) give the concepts
// llmreplay names, each with the one spelling llmreplay uses. A name in any
// vocabulary holding one of them is a second spelling of a concept that
// has one already.
var synonyms = []struct{ word, use string }{
	{"prompt_tokens", "input_tokens"}, {"prompt_len", "input_tokens"}, {"input_len", "input_tokens"}, {"isl", "input_tokens"},
	{"completion_tokens", "output_tokens"}, {"generated_tokens", "output_tokens"}, {"gen_tokens", "output_tokens"},
	{"output_len", "output_tokens"}, {"osl", "output_tokens"}, {"output_token", "output_tokens"},
	{"time_to_first_token", "ttft"}, {"first_token_latency", "ttft"}, {"inter_token_latency", "itl"},
	{"time_per_output_token", "tpot"}, {"e2el", "e2e"}, {"request_latency", "e2e"}, {"e2e_latency", "e2e"},
	{"tokens_per_s", "tps"}, {"tokens_per_second", "tps"}, {"tok_s", "tps"}, {"toks", "tps"}, {"throughput", "tps"},
	{"rps", "requests_per_s"}, {"qps", "requests_per_s"}, {"req_per_s", "requests_per_s"},
	{"num_streams", "concurrency"}, {"parallel", "concurrency"}, {"max_concurrency", "concurrency"},
	{"median", "p50 (or the metric's own name: its value is the median)"},
	{"num_prompts", "requests"}, {"n_prompts", "requests"},
}

// spelledAs normalizes a name across vocabularies: a flag's --input-tokens
// is the claims' and tables' input_tokens.
func spelledAs(name string) string { return strings.ReplaceAll(strings.ToLower(name), "-", "_") }

// TestOneSpellingPerConcept compares the vocabularies a user meets — flag
// names, claim names (metrics and grouping keys), the JSON keys of analyze
// and trace cat --requests, the CSV columns of analyze and export, and the
// Parquet columns — so a concept has one spelling everywhere: no name
// holds a synonym of a name llmreplay already uses, and the names that
// appear in several vocabularies (input_tokens as a flag, a key, a column)
// are spelled alike once '-' is read as '_'. A new name with another
// spelling of an existing concept fails here.
func TestOneSpellingPerConcept(t *testing.T) {
	where := map[string]map[string]bool{} // spelledAs(name) → vocabularies
	raw := map[string]map[string]bool{}   // spelledAs(name) → names as written
	add := func(vocab, name string) {
		n := spelledAs(name)
		if where[n] == nil {
			where[n], raw[n] = map[string]bool{}, map[string]bool{}
		}
		where[n][vocab], raw[n][name] = true, true
	}

	// Flags of every command.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) { add("flags", f.Name) })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRootCmd(io.Discard, io.Discard))

	// Claim names: metrics with their statistics, grouping keys.
	for _, m := range analyze.Metrics {
		add("claims", m.Name)
		for _, s := range m.Stats() {
			if s != "" {
				add("claims", m.Name+"_"+s)
			}
		}
	}
	for _, k := range analyze.Keys {
		add("claims", k)
	}

	// JSON keys: analyze's document of two sample traces (warnings'
	// evidence aside: free-form facts), and trace cat --requests.
	samples := []string{filepath.Join("..", "..", "traces", "samples", "vllm-rtx5090-bf16.trace.zst"),
		filepath.Join("..", "..", "traces", "samples", "llamacpp-rtx5090-q4km.trace.zst")}
	js, _, err := runAnalyzeCLI(t, nil, append([]string{"analyze", "--format", "json", "--by", "label,concurrency,input_tokens"}, samples...)...)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var keys func(v any)
	keys = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				add("json", k)
				if k != "evidence" {
					keys(e)
				}
			}
		case []any:
			for _, e := range x {
				keys(e)
			}
		}
	}
	keys(doc)
	rows, _, err := runAnalyzeCLI(t, nil, "trace", "cat", "--requests", samples[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.SplitN(rows, "\n", 20)[:10] {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			keys(m)
		}
	}

	// CSV columns: analyze's sweep and metric tables, export's files.
	for _, args := range [][]string{{"analyze", "--format", "csv"}, {"analyze", "--format", "csv", "--metrics", "ttft_p99,tpot,per_stream_tps,aggregate_tps,goodput"}} {
		out, _, err := runAnalyzeCLI(t, nil, append(args, samples...)...)
		if err != nil {
			t.Fatal(err)
		}
		head, err := csv.NewReader(strings.NewReader(out)).Read()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range head {
			add("csv", c)
		}
	}
	dir := filepath.Join(t.TempDir(), "csv")
	if _, e, err := runAnalyzeCLI(t, nil, append([]string{"export", "--format", "csv", "-o", dir}, samples...)...); err != nil {
		t.Fatal(err, e)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := csv.NewReader(strings.NewReader(string(b))).Read()
		for _, c := range head {
			add("csv", c)
		}
	}

	// Parquet columns: the export rows' tags.
	for _, row := range []any{export.RequestRow{}, export.ChunkRow{}, export.RunRow{}, export.MetricRow{}} {
		ty := reflect.TypeOf(row)
		for i := 0; i < ty.NumField(); i++ {
			if tag := ty.Field(i).Tag.Get("parquet"); tag != "" {
				add("parquet", strings.Split(tag, ",")[0])
			}
		}
	}

	names := make([]string, 0, len(where))
	for n := range where {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, s := range synonyms {
			if regexp.MustCompile(`(^|_)` + regexp.QuoteMeta(s.word) + `($|_)`).MatchString(n) {
				t.Errorf("%s (in %s) spells %q, which llmreplay calls %s: use that spelling", n, vocabs(where[n]), s.word, s.use)
			}
		}
		// One spelling of a name across vocabularies, once '-' is '_':
		// a flag's dashes, a key's underscores, nothing else.
		if len(raw[n]) > 1 {
			for r := range raw[n] {
				if r != n && r != strings.ReplaceAll(n, "_", "-") {
					t.Errorf("%s is also written %q (in %s)", n, r, vocabs(where[n]))
				}
			}
		}
	}

	// The names people type in one place and another are the same words:
	// the grouping keys are flags, JSON keys and columns as they are.
	for _, k := range []string{"label", "concurrency", "input_tokens", "max_tokens"} {
		for _, v := range []string{"flags", "json", "csv", "parquet"} {
			if k == "max_tokens" && v == "json" {
				continue // the analysis document has no per-request fields
			}
			if !where[k][v] {
				t.Errorf("%s is not a name in %s (it is in %s)", k, v, vocabs(where[k]))
			}
		}
	}
}

func vocabs(m map[string]bool) string {
	var out []string
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
