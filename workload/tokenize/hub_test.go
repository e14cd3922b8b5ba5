package tokenize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/hfhubtest"
	"github.com/llmreplay/llmreplay/internal/zstdtest"
)

// fakeHubCache lays out a Hugging Face hub cache under a temp folder as
// huggingface-cli leaves it: the file in blobs/, a snapshot symlink to it,
// refs/main naming the revision. It returns the cache folder.
func fakeHubCache(t *testing.T, repo, rev string, withRef bool) string {
	t.Helper()
	cache := t.TempDir()
	writeHubSnapshot(t, cache, repo, rev, withRef)
	return cache
}

// writeHubSnapshot adds revision rev of repo, holding the test copy of
// Qwen3's tokenizer.json, to the hub cache folder cache.
func writeHubSnapshot(t *testing.T, cache, repo, rev string, withRef bool) string {
	t.Helper()
	return hfhubtest.Snapshot(t, cache, repo, rev, zstdtest.ReadFile(t, hfPath("qwen3")), withRef)
}

// A model id resolves, offline, to the tokenizer.json of the revision
// refs/main names, in the cache HF_HUB_CACHE, else HF_HOME/hub, else
// XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub names;
// the tokenizer is named by the id and counts as the file does.
func TestModelIDFromHubCache(t *testing.T) {
	const rev = "0123456789abcdef0123"
	for _, c := range []struct {
		env string // the variable set; the others are empty
		hub string // where the cache is, under the variable's folder
	}{
		{"HF_HUB_CACHE", ""},
		{"HF_HOME", "hub"},
		{"XDG_CACHE_HOME", filepath.Join("huggingface", "hub")},
		{"HOME", filepath.Join(".cache", "huggingface", "hub")},
	} {
		root := t.TempDir()
		for _, v := range []string{"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"} {
			t.Setenv(v, "")
		}
		t.Setenv(c.env, root)
		cache := filepath.Join(root, c.hub)
		want := writeHubSnapshot(t, cache, "Qwen/Qwen3-8B", rev, true)
		writeHubSnapshot(t, cache, "Qwen/Qwen3-8B", "ffffffffffff0000", false) // an older revision, not main
		r, err := Resolve("Qwen/Qwen3-8B")
		if err != nil || r.Path != want || !strings.Contains(r.From, "main revision 0123456789ab") {
			t.Errorf("%s: Resolve = %+v, %v; want %s", c.env, r, err, want)
		}
	}
	cache := fakeHubCache(t, "Qwen/Qwen3-8B", rev, true)
	old := writeHubSnapshot(t, cache, "Qwen/Qwen3-8B", "ffffffffffff0000", false)
	t.Setenv("HF_HUB_CACHE", cache)
	tok, err := Load("Qwen/Qwen3-8B")
	if err != nil {
		t.Fatal(err)
	}
	file := loadT(t, hfPath("qwen3"))
	if tok.Name() != "hf:Qwen/Qwen3-8B" || tok.Digest() != file.Digest() || tok.Count("Hello, world") != file.Count("Hello, world") {
		t.Errorf("loaded %s %s, the file is %s", tok.Name(), tok.Digest(), file.Digest())
	}
	if p := RecordedPath("Qwen/Qwen3-8B"); !strings.HasSuffix(p, filepath.Join("0123456789abcdef0123", "tokenizer.json")) {
		t.Errorf("RecordedPath = %s, want the main revision's file", p)
	}
	// Without refs/main, the only revision with a tokenizer.json is used.
	os.Remove(filepath.Join(cache, "models--Qwen--Qwen3-8B", "refs", "main"))
	os.RemoveAll(filepath.Dir(old))
	if r, err := Resolve("Qwen/Qwen3-8B"); err != nil || !strings.Contains(r.From, "only revision") {
		t.Errorf("no refs/main: %+v, %v", r, err)
	}
}

// A model id the cache lacks is an error naming where it looked and how
// to download it; a path that exists is never taken for a model id.
func TestModelIDMissing(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	_, err := Load("Qwen/Qwen3-8B")
	for _, w := range []string{`Tokenizer "Qwen/Qwen3-8B" is no file`, cache, "HF_HUB_CACHE", filepath.Join(cache, "models--Qwen--Qwen3-8B", "snapshots"), "huggingface-cli download Qwen/Qwen3-8B tokenizer.json"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing model: %v lacks %q", err, w)
		}
	}
	// refs/main naming a revision without tokenizer.json
	dir := filepath.Join(cache, "models--Org--M", "refs")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "main"), []byte("abc\n"), 0o644)
	if _, err := Resolve("Org/M"); err == nil || !strings.Contains(err.Error(), "main revision of it (abc") || !strings.Contains(err.Error(), "huggingface-cli download Org/M tokenizer.json") {
		t.Errorf("revision without the file: %v", err)
	}
	// Paths are paths.
	for _, spec := range []string{"o200k_base", hfPath("qwen3"), "testdata/qwen3", "a/b.json", "./x/y"} {
		if IsModelID(spec) {
			t.Errorf("IsModelID(%q)", spec)
		}
	}
	if !IsModelID("meta-llama/Llama-3.1-8B-Instruct") {
		t.Error("a model id with dots and dashes is one")
	}
}
