//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestProbePrefixCacheThroughTheBinary (issue #16 item 4): against the
// built-in simulator the probe's verdicts are right with the prefix cache
// on (every step PASS, exit 0) and off (the two repeat steps FAIL, exit 1),
// judged by the simulator's cached-token counts; bad input exits 2 before
// anything is sent.
func TestProbePrefixCacheThroughTheBinary(t *testing.T) {
	bin := builtBinary(t)
	out, e, code := run(t, nil, bin, "probe", "prefix-cache", "--profile", "vllm-rtx5090-fp8", "--input-tokens", "256")
	if code != 0 || strings.Count(out, " PASS ") != 4 || !strings.Contains(out, "prefix cache: PASS") ||
		!strings.Contains(out, "2 the same prompts again         HIT       HIT         PASS    6 of 6 requests HIT") {
		t.Errorf("cache on: exit %d\n%s%s", code, out, e)
	}
	if !strings.Contains(e, "SIMULATED server, profile vllm-rtx5090-fp8, prefix cache on") || !strings.Contains(e, "24 requests sent, 24 ok") {
		t.Errorf("stderr: %s", e)
	}
	out, e, code = run(t, nil, bin, "probe", "prefix-cache", "--profile", "vllm-rtx5090-fp8", "--input-tokens", "256", "--no-prefix-cache")
	if code != 1 || !strings.Contains(out, "2 the same prompts again         HIT       MISS        FAIL    0 of 6 requests HIT") ||
		!strings.Contains(out, "4 the first prompts once more    HIT       MISS        FAIL") || !strings.Contains(out, "prefix cache: FAIL") {
		t.Errorf("cache off: exit %d\n%s%s", code, out, e)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--repeats", "0"}, "--repeats 0: give at least 1"}, {[]string{"--repeats", "2000"}, "--repeats is 2000: give 1 to 1000 prompts per step"},
		{[]string{"--input-tokens", "10"}, "--input-tokens is 10: give at least 64"},
		{[]string{"--salt", "on"}, "--salt: the probe sends its prompts verbatim"},
		{[]string{"--url", "http://127.0.0.1:1", "--no-prefix-cache"}, "apply to the built-in simulator only"},
	} {
		_, e, code := run(t, nil, bin, append([]string{"probe", "prefix-cache"}, c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, e)
		}
	}
}
