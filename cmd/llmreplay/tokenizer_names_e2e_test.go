package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/internal/testutil"
)

// hubCache lays out a Hugging Face hub cache under root as
// `huggingface-cli download Qwen/Qwen3-8B tokenizer.json` leaves it (the
// file in blobs/, the snapshot a symlink to it, refs/main naming the
// revision), holding the repository's test copy of Qwen3's tokenizer.json.
// It returns the snapshot's tokenizer.json.
func hubCache(t *testing.T, root string) string {
	t.Helper()
	return testutil.HubSnapshot(t, root, "Qwen/Qwen3-8B", "9c925d64d72725edaf899c6cb9c377fd0709d9c5", "tokenizer.json",
		testutil.ReadZstd(t, filepath.Join("..", "..", "workload", "tokenize", "testdata", "qwen3", "tokenizer.json.zst")), true)
}

// TestTokenizerByModelID: --tokenizer takes a Hugging Face model id and
// finds its tokenizer.json in the local hub cache (HF_HUB_CACHE, else
// HF_HOME/hub, else ~/.cache/huggingface/hub), offline, saying which file
// it used; workload build records it by the id, verify and analyze take
// the id too; a model the cache lacks is one line naming where it looked
// and the command that downloads it.
func TestTokenizerByModelID(t *testing.T) {
	bin := parallelBinary(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "hub")
	file := hubCache(t, cache)
	env := []string{"HF_HUB_CACHE=" + cache, "HF_HOME=", "XDG_CACHE_HOME="}
	said := "tokenizer: Qwen/Qwen3-8B is " + file + " (the Hugging Face cache's main revision 9c925d64d727)"

	wl := filepath.Join(dir, "q.workload.zst")
	o, e, code := run(t, env, bin, "workload", "build", "--tokenizer", "Qwen/Qwen3-8B", "--schedule", "burst:1", "--repeats", "1", "--input-tokens", "100", "--max-tokens", "8", "-o", wl)
	if code != 0 || !strings.Contains(e, said) || !strings.Contains(o, "(hf:Qwen/Qwen3-8B)") {
		t.Fatalf("workload build: exit %d, stderr %q; want it to say %q", code, e, said)
	}
	if o, e, code := run(t, env, bin, "workload", "inspect", wl); code != 0 || !strings.Contains(o, "tokenizer:  hf:Qwen/Qwen3-8B") {
		t.Errorf("workload inspect: exit %d\n%s%s", code, o, e)
	}
	// The recorded file is found again without the id; the id is taken too.
	for _, args := range [][]string{{"workload", "verify", wl}, {"workload", "verify", wl, "--tokenizer", "Qwen/Qwen3-8B"}} {
		if o, e, code := run(t, env, bin, args...); code != 0 || !strings.Contains(o, "every count exact") {
			t.Errorf("%v: exit %d\n%s%s", args, code, o, e)
		}
	}
	sample := filepath.Join("..", "..", "traces", "samples", "vllm-rtx5090-bf16.trace.zst")
	if _, e, code := run(t, env, bin, "analyze", sample, "--tokenizer", "Qwen/Qwen3-8B"); code != 0 || !strings.Contains(e, said) {
		t.Errorf("analyze --tokenizer Qwen/Qwen3-8B: exit %d\n%s", code, e)
	}
	// The default cache, ~/.cache/huggingface/hub, with no variable set.
	home := filepath.Join(dir, "home")
	homeFile := hubCache(t, filepath.Join(home, ".cache", "huggingface", "hub"))
	if _, e, code := run(t, []string{"HOME=" + home, "HF_HUB_CACHE=", "HF_HOME=", "XDG_CACHE_HOME="}, bin, "workload", "build", "--tokenizer", "Qwen/Qwen3-8B",
		"--schedule", "burst:1", "--repeats", "1", "--input-tokens", "100", "--max-tokens", "8", "-o", filepath.Join(dir, "h.workload.zst")); code != 0 || !strings.Contains(e, homeFile) {
		t.Errorf("~/.cache/huggingface/hub: exit %d\n%s", code, e)
	}
	// Not in the cache: one line, exit 2, no file written.
	empty := filepath.Join(dir, "empty")
	out := filepath.Join(dir, "none.workload.zst")
	_, e, code = run(t, []string{"HF_HUB_CACHE=" + empty}, bin, "workload", "build", "--tokenizer", "Meta/Llama-9", "-o", out)
	if code != 2 {
		t.Errorf("missing model: exit %d, want 2: %s", code, e)
	}
	oneLine(t, "missing model", e, `--tokenizer "Meta/Llama-9" is no file`, "the Hugging Face cache ("+empty+", from HF_HUB_CACHE)",
		filepath.Join(empty, "models--Meta--Llama-9", "snapshots", "REV", "tokenizer.json"), "'huggingface-cli download Meta/Llama-9 tokenizer.json'")
	if _, err := os.Stat(out); err == nil {
		t.Error("a workload was written with no tokenizer")
	}
}
