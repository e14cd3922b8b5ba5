package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestNoCacheHitOnRepeat: hand-made three-request runs of 1,000-token
// prompts. With --prefix shared:256, no salt and a server reporting cached
// tokens, 0 cached for all three is the warning (3 requests counted); one
// request at 256 cached (the shared prefix's blocks) is not; neither is a
// salted run, a run that asked the server's cache off, a unique-prefix run
// or a server that reports no count.
func TestNoCacheHitOnRepeat(t *testing.T) {
	mk := func(prefix, cache string, salt bool, cached []int) testTrace {
		h := header("A", phase(0, 1, 1000, 7, 1))
		h.Salt = salt
		h.Options = map[string]string{"server_cache": cache}
		if prefix != "" {
			h.Options["prefix"] = prefix
		}
		var recs []trace.Record
		for i, c := range cached {
			r := okRecord(string(rune('a'+i)), 0, float64(200*i))
			r.InputTokens = 1000
			r.Usage = `{"prompt_tokens":1000,"completion_tokens":7}`
			if c >= 0 {
				r.Usage = fmt.Sprintf(`{"prompt_tokens":1000,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":%d}}`, c)
			}
			recs = append(recs, r)
		}
		return testTrace{h: h, records: recs}
	}
	res := analyzeTraces(t, Options{}, mk("shared:256", "default", false, []int{0, 0, 0}))
	w := hasWarning(res.Warnings, WarnNoHitOnRepeat)
	if w == nil || !strings.Contains(w.Message, "--prefix shared:256 run") || !strings.Contains(w.Message, "in 3 requests") || w.Evidence["requests"] != 3 {
		t.Fatalf("no_cache_hit_on_repeat: %+v", w)
	}
	for name, tt := range map[string]testTrace{
		"one hit":          mk("shared:256", "default", false, []int{0, 256, 0}),
		"salted":           mk("shared:256", "default", true, []int{0, 0, 0}),
		"cache asked off":  mk("shared", "off", false, []int{0, 0, 0}),
		"unique prefix":    mk("unique", "default", false, []int{0, 0, 0}),
		"no prefix option": mk("", "default", false, []int{0, 0, 0}),
		"no count":         mk("shared", "default", false, []int{-1, -1, -1}),
		"one request":      mk("shared", "default", false, []int{0}),
	} {
		res := analyzeTraces(t, Options{}, tt)
		if w := hasWarning(res.Warnings, WarnNoHitOnRepeat); w != nil {
			t.Errorf("%s: warned %+v", name, w)
		}
	}
}
