package endpoint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// adapters are the APIs, in the order help text lists them.
var adapters = []*adapter{openAIChat, openAICompletions, llamaCpp, ollamaGenerate, ollamaChat, anthropic, openAIResponses, tgi, sglang, trtllm}

// Names are the --api values, in the order help text lists them.
var Names = func() []string {
	var n []string
	for _, a := range adapters {
		n = append(n, a.name)
	}
	return n
}()

// Aliases are other names people type for an API: a server's or project's
// name for the API it serves (vLLM, LM Studio and llama-server all serve
// OpenAI chat completions), or a shorter or longer spelling. Each maps to
// one of Names. An engine whose native API is an API of its own is not an
// alias of its OpenAI route: "sglang" and "tgi" are those engines' native
// APIs, and the engines' chat routes are openai-chat.
var Aliases = map[string]string{
	"openai": "openai-chat", "chat": "openai-chat", "chat-completions": "openai-chat",
	"vllm": "openai-chat", "lmdeploy": "openai-chat", "lm-studio": "openai-chat", "lmstudio": "openai-chat",
	"mlx": "openai-chat", "mlx-lm": "openai-chat", "litellm": "openai-chat",
	"completions": "openai-completions", "vllm-completions": "openai-completions",
	"llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "llama-server": "llamacpp",
	"ollama": "ollama-chat",
	"claude": "anthropic", "messages": "anthropic", "anthropic-messages": "anthropic",
	"responses":                 "openai-responses",
	"text-generation-inference": "tgi", "hf-tgi": "tgi",
	"sglang-native": "sglang",
	"triton":        "trtllm", "tensorrt-llm": "trtllm", "tensorrtllm": "trtllm", "trt-llm": "trtllm",
}

// Canonical returns the name of the API that name (a name or an alias, in
// any case, with _ for -) stands for, and whether there is one.
func Canonical(name string) (string, bool) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	for _, a := range adapters {
		if a.name == n {
			return n, true
		}
	}
	c, ok := Aliases[n]
	return c, ok
}

// Lookup returns the Endpoint for an --api value: a name or an alias. An
// unknown name is an error that lists the names and suggests the nearest.
func Lookup(name string) (Endpoint, error) {
	c, ok := Canonical(name)
	if !ok {
		return nil, unknownAPI(name)
	}
	for _, a := range adapters {
		if a.name == c {
			return a, nil
		}
	}
	panic("endpoint: alias " + name + " names no API") // TestAliases holds every alias to a name
}

func unknownAPI(name string) error {
	msg := fmt.Sprintf("unknown API %q: use one of %s", name, strings.Join(Names, ", "))
	if s := Suggest(name); s != "" {
		msg = fmt.Sprintf("unknown API %q (did you mean %s?): use one of %s", name, s, strings.Join(Names, ", "))
	}
	return fmt.Errorf("%s", msg)
}

// Suggest returns the API name or alias nearest to name, "" if none is
// near: within a third of the longer word's letters in edits (insertions,
// deletions, substitutions), or one that contains name or is contained in
// it. An alias is suggested with what it stands for: "vllm (openai-chat)".
func Suggest(name string) string {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	if n == "" {
		return ""
	}
	best, bestD := "", 0
	try := func(cand string) {
		d := editDistance(n, cand)
		if strings.Contains(cand, n) || strings.Contains(n, cand) {
			d = min(d, 1)
		}
		if d*3 > max(len(n), len(cand)) || (best != "" && d >= bestD) {
			return
		}
		best, bestD = cand, d
	}
	for _, a := range adapters {
		try(a.name)
	}
	// In a fixed order, so a tie between two equally near aliases is
	// broken the same way every run.
	for _, a := range slices.Sorted(maps.Keys(Aliases)) {
		try(a)
	}
	if c, ok := Aliases[best]; ok {
		return best + " (" + c + ")"
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (API names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
