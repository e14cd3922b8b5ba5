package workload

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/golden"
	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestInspectTextOfEveryVersion: workload inspect's text of the golden
// workload of every format version is what its golden file says.
func TestInspectTextOfEveryVersion(t *testing.T) {
	for _, p := range testutil.Glob(t, "testdata/golden-v1*.workload.zst", 4) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			wl, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			Summarize(p, wl).WriteText(&b)
			name := "inspect-" + strings.TrimSuffix(filepath.Base(p), ".workload.zst") + ".golden"
			golden.Check(t, filepath.Join("testdata", name), b.Bytes(), *update, "go test ./workload -run TestInspectTextOfEveryVersion -update")
		})
	}
}

// TestDescribe: build's one line counts requests, phases and input
// tokens, singular when one.
func TestDescribe(t *testing.T) {
	wl := &Workload{Header: Header{Tokenizer: "o200k_base", Phases: []Phase{{Index: 0}}},
		Requests: []Request{{ID: "a", InputTokens: 1}}}
	if got := wl.Describe(); !strings.HasPrefix(got, "1 request in 1 phase, 1 input token (o200k_base), sha256:") {
		t.Errorf("got %q", got)
	}
	wl.Requests = append(wl.Requests, Request{ID: "b", InputTokens: 799})
	if got := wl.Describe(); !strings.HasPrefix(got, "2 requests in 1 phase, 800 input tokens (o200k_base), ") {
		t.Errorf("got %q", got)
	}
}

// TestVerificationText: the first 20 prompts off, then how many more,
// with ids escaped; none off is one line saying every count was exact.
func TestVerificationText(t *testing.T) {
	var v Verification
	for i := range 25 {
		v.Off = append(v.Off, Mismatch{ID: fmt.Sprintf("p%02d\x1b", i), Counted: 64, Recorded: 65})
	}
	var b strings.Builder
	v.WriteText(&b, "o200k_base", 100)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 21 || lines[0] != `p00\x1b: 64 tokens under o200k_base, recorded 65 (-1)` || lines[20] != "… and 5 more" {
		t.Errorf("got:\n%s", b.String())
	}
	b.Reset()
	Verification{}.WriteText(&b, "o200k_base", 6)
	if got := b.String(); got != "verified 6 prompts under o200k_base: every count exact\n" {
		t.Errorf("got %q", got)
	}
}
