//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAPINamesThroughTheBinary: the names people type for an API work and
// are recorded as the API they name (--api vllm is openai-chat, --api
// llama.cpp is llamacpp); a misspelt one exits 2 with one line that names
// the nearest and lists the accepted names. The chat run is against
// `llmreplay sim --reasoning-tokens 3`, so it also shows, as a user meets
// them, the role-only first delta kept as a chunk without text and the
// reasoning kept apart from the answer, with the analysis still counting
// only text-bearing chunks (no usage warning).
func TestAPINamesThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
	simURL := startSim(t, bin, "--reasoning-tokens", "3")
	for _, c := range []struct{ alias, api, shape string }{
		{"vllm", "openai-chat", "chat"},
		{"llama.cpp", "llamacpp", "completion"},
	} {
		dir := t.TempDir()
		wl := buildWorkload(t, bin, dir, "--max-tokens", "8", "--schedule", "burst:1", "--repeats", "1", "--shape", c.shape)
		tr := filepath.Join(dir, "t.trace.zst")
		if _, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "--api", c.alias, "-o", tr); code != 0 {
			t.Fatalf("--api %s: exit %d: %s", c.alias, code, e)
		}
		h, recs := readTrace(t, tr)
		if h.API != c.api || len(recs) != 1 || !recs[0].OK() {
			t.Fatalf("--api %s: header api %q, %d records: want %s, one ok record", c.alias, h.API, len(recs), c.api)
		}
		if c.api != "openai-chat" {
			continue
		}
		rec := recs[0]
		if first := rec.Chunks[0]; first.Text != "" || first.Reasoning != "" || first.Tokens != 0 || first.T <= 0 || first.Bytes <= 0 {
			t.Errorf("first chunk %+v: want the role-only delta, with its time and bytes and no text", first)
		}
		var text, reasoning string
		for _, ch := range rec.Chunks {
			text += ch.Text
			reasoning += ch.Reasoning
		}
		if reasoning != "1, " || !strings.HasPrefix(text, "2,") || rec.ServerTextTokens != 8 {
			t.Errorf("reasoning %q, text %q, server tokenizer %d: want the count-up's first 3 tokens as reasoning, the rest as text, 8 tokens in all", reasoning, text, rec.ServerTextTokens)
		}
		if out, e, code := run(t, nil, bin, "analyze", tr, "--format", "json"); code != 0 || strings.Contains(out, "usage_mismatch") {
			t.Errorf("analyze exit %d, or a usage warning:\n%s\n%s", code, out, e)
		}
	}
	dir := t.TempDir()
	wl := buildWorkload(t, bin, dir, "--max-tokens", "4", "--schedule", "burst:1", "--repeats", "1")
	_, e, code := run(t, nil, bin, "replay", wl, "--url", simURL, "--api", "opanai-chat", "-o", filepath.Join(dir, "t.trace.zst"))
	lines := strings.Split(strings.TrimSpace(e), "\n")
	if code != 2 || len(lines) != 1 || !strings.Contains(e, `"opanai-chat" is not known`) || !strings.Contains(e, "did you mean openai-chat?") ||
		!strings.Contains(e, "openai-responses, tgi, sglang, trtllm or auto") {
		t.Errorf("--api opanai-chat: exit %d, stderr %q: want exit 2 and one line naming openai-chat and the accepted names", code, e)
	}
}
