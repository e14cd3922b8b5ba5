package main

import (
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/analyze"
	"github.com/llmreplay/llmreplay/sim"
)

// TestCompletionValues: the shell's completion (cobra's hidden __complete
// command, which the scripts from `llmreplay completion bash|zsh|fish` call)
// offers the values of --api, --profile, --format, --definitions,
// --tokenizer and metric names.
func TestCompletionValues(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"api", []string{"replay", "w.workload.zst", "--api", ""}, []string{"openai-chat", "llamacpp", "ollama-chat"}, nil},
		{"api prefix", []string{"bench", "--api", "olla"}, []string{"ollama-generate", "ollama-chat"}, []string{"openai-chat"}},
		{"profile", []string{"sim", "--profile", ""}, sim.ProfileNames(), nil},
		{"bench profile", []string{"bench", "--profile", "vllm"}, []string{"vllm-rtx5090-bf16"}, []string{"llamacpp-rtx5090-q4km"}},
		{"analyze format", []string{"analyze", "--format", ""}, []string{"table", "markdown", "csv", "json"}, nil},
		{"check format", []string{"check", "--format", ""}, []string{"text", "json"}, []string{"csv"}},
		{"definitions", []string{"analyze", "--definitions", ""}, analyze.DefinitionNames(), nil},
		{"tokenizer names", []string{"workload", "build", "--tokenizer", "cl"}, []string{"cl100k_base"}, []string{"o200k_base"}},
		{"tokenizer files", []string{"analyze", "--tokenizer", "./models/"}, []string{"json", "zst", ":8"}, nil},
		{"metric names, comma list", []string{"analyze", "--metrics", "ttft_p99,per_stream_tps_m"},
			[]string{"ttft_p99,per_stream_tps_min", "ttft_p99,per_stream_tps_max", "ttft_p99,per_stream_tps_mean"}, []string{"ttft_p99,ttft"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runCLI(t, nil, append([]string{"__complete"}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			has := map[string]bool{}
			for _, l := range lines {
				has[l] = true
			}
			for _, w := range c.want {
				if !has[w] {
					t.Errorf("completion of %v lacks %q:\n%s", c.args, w, out)
				}
			}
			for _, n := range c.not {
				if has[n] {
					t.Errorf("completion of %v offers %q, which does not match", c.args, n)
				}
			}
		})
	}
	// The scripts themselves are generated.
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, _, err := runCLI(t, nil, "completion", sh)
		if err != nil || !strings.Contains(out, "llmreplay") {
			t.Errorf("completion %s: %v, %d bytes", sh, err, len(out))
		}
	}
}
