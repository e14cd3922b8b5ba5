package tokenize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// TestRecall: every way a recorded tokenizer is found again or refused,
// one line each. "changed" puts another tokenizer.json (DeepSeek-V3's) at
// the recorded path: it loads, but its digest is not Qwen3's.
func TestRecall(t *testing.T) {
	dir := t.TempDir()
	copyTo := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		testutil.WriteFile(t, dst, b)
	}
	qwen := filepath.Join(dir, "qwen3", "tokenizer.json.zst")
	copyTo("testdata/qwen3/tokenizer.json.zst", qwen)
	q, err := Load(qwen)
	if err != nil {
		t.Fatal(err)
	}
	// "changed": Qwen3's file loaded once (and so cached), then replaced
	// by another at the same path, as a long-lived Go program may see it.
	changed := filepath.Join(dir, "changed", "qwen3", "tokenizer.json.zst")
	copyTo("testdata/qwen3/tokenizer.json.zst", changed)
	if _, err := Load(changed); err != nil {
		t.Fatal(err)
	}
	copyTo("testdata/deepseek_v3/tokenizer.json.zst", changed)
	name, digest := q.Name(), q.Digest()

	for _, tc := range []struct {
		test                         string
		name, path, digest, override string
		wantSource, wantErr          string
	}{
		{"built-in by name", "o200k_base", "", "", "", "", ""},
		{"recorded file, digest matches", name, qwen, digest, "", qwen, ""},
		{"override wins over the record", name, filepath.Join(dir, "gone.json"), digest, qwen, qwen, ""},
		{"nothing recorded", "", "", "", "", "", "no tokenizer is recorded"},
		{"older file without a path", name, "", "", "", "", "whose path was not recorded"},
		{"file gone", name, filepath.Join(dir, "gone", "tokenizer.json"), digest, "", "", "which is gone: give it"},
		{"file changed", name, changed, digest, "", "", "has changed since"},
	} {
		t.Run(tc.test, func(t *testing.T) {
			tok, source, err := Recall(tc.name, tc.path, tc.digest, tc.override)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("want one line containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil || tok == nil || source != tc.wantSource {
				t.Fatalf("got %v, source %q, err %v; want source %q", tok, source, err, tc.wantSource)
			}
		})
	}
}
