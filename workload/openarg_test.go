package workload

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestOpenArgReadsAFileOrStdin: "-" reads the workload from stdin, any
// other argument from its file; a bad one is named "stdin" or by its
// path.
func TestOpenArgReadsAFileOrStdin(t *testing.T) {
	wl, err := Build(BuildConfig{InputTokens: []int{100}, MaxTokens: 4, Schedule: "burst:1", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, wl); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.workload.zst")
	testutil.WriteFile(t, path, buf.Bytes())
	for _, c := range []struct {
		name, arg string
		stdin     []byte
		want      string // "" when it reads, else the error's start
	}{
		{"file", path, nil, ""},
		{"stdin", "-", buf.Bytes(), ""},
		{"bad stdin", "-", []byte("not a workload"), "stdin: "},
		{"missing file", path + ".gone", nil, "cannot open workload: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := OpenArg(c.arg, bytes.NewReader(c.stdin))
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want == "" && len(got.Requests) != len(wl.Requests):
				t.Errorf("read %d requests, want %d", len(got.Requests), len(wl.Requests))
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}

// TestBuildInputsNameTheFilesRead: the tokenizer and a trace schedule's
// log are what an output must not replace.
func TestBuildInputsNameTheFilesRead(t *testing.T) {
	for _, c := range []struct {
		cfg  BuildConfig
		want []string
	}{
		{BuildConfig{Tokenizer: "o200k_base", Schedule: "burst:1"}, []string{"o200k_base", "burst:1"}},
		{BuildConfig{Tokenizer: "tok/tokenizer.json", Schedule: "trace:logs/a.jsonl"}, []string{"tok/tokenizer.json", "logs/a.jsonl"}},
	} {
		if got := c.cfg.Inputs(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}
