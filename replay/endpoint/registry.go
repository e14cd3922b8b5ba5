package endpoint

import (
	"fmt"
	"strings"
)

// Names are the --api values, in the order help text lists them.
var Names = []string{"openai-chat", "openai-completions", "llamacpp", "ollama-generate", "ollama-chat", "anthropic", "openai-responses", "tgi", "sglang", "trtllm"}

// Lookup returns the Endpoint for an --api value.
func Lookup(name string) (Endpoint, error) {
	switch name {
	case "openai-chat":
		return OpenAIChat{}, nil
	case "openai-completions":
		return OpenAICompletions{}, nil
	case "llamacpp":
		return LlamaCpp{}, nil
	case "ollama-generate":
		return OllamaGenerate{}, nil
	case "ollama-chat":
		return OllamaChat{}, nil
	case "anthropic":
		return Anthropic{}, nil
	case "openai-responses":
		return OpenAIResponses{}, nil
	case "tgi":
		return TGI{}, nil
	case "sglang":
		return SGLang{}, nil
	case "trtllm":
		return TRTLLM{}, nil
	}
	return nil, fmt.Errorf("unknown API %q: use one of %s", name, strings.Join(Names, ", "))
}
