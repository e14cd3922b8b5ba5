//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmreplay/llmreplay/trace"
)

// TestProbePrefixCacheThroughTheBinary: against the built-in simulator the
// probe's verdicts are right with the prefix cache on (every step PASS, exit
// 0) and off (the two repeat steps FAIL, exit 1), judged by the simulator's
// cached-token counts; bad input exits 2 before anything is sent.
func TestProbePrefixCacheThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
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
		{[]string{"--salt", "on"}, "--salt: the probe sends its prompts verbatim (a salt would keep them from the cache; they are new to each run already, see --seed)"},
		{[]string{"--url", "http://127.0.0.1:1", "--no-prefix-cache"}, "apply to the built-in simulator only"},
	} {
		_, e, code := run(t, nil, bin, append([]string{"probe", "prefix-cache"}, c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, e)
		}
	}
}

// TestProbeSharedSystemThroughTheBinary (the paged-cache mode): with
// defaults (2 rounds of 10 sharing a 286-token system prompt) the
// simulator's cache serves every second-round request the system prompt's
// full blocks (the vLLM profile's 16-token blocks: the count is the same for
// all ten), so the probe passes (exit 0); without the cache no request hits
// and it fails (exit 1). Mode-foreign flags exit 2.
func TestProbeSharedSystemThroughTheBinary(t *testing.T) {
	bin := parallelBinary(t)
	out, e, code := run(t, nil, bin, "probe", "prefix-cache", "--mode", "shared-system", "--profile", "vllm-rtx5090-fp8")
	if code != 0 || !strings.Contains(out, "shared system prompt (286 tokens): PASS: 10 of 10 requests after the first round hit") {
		t.Errorf("cache on: exit %d\n%s%s", code, out, e)
	}
	// Round 2's line: 10 requests, 10 hits, and a cached count that is a
	// multiple of ten (each request the same whole blocks) and at least
	// ten times the system prompt's full 16-token blocks (10·17·16).
	// Round 1's burst may hit too, for requests the busy machine sent
	// after another's prefill: the tokens saved are both rounds'.
	var round, n, hits, cached [3]int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "1 ") || strings.HasPrefix(l, "2 ") {
			i := int(l[0] - '0')
			if _, err := fmt.Sscan(l, &round[i], &n[i], &hits[i], &cached[i]); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
		}
	}
	if n[2] != 10 || hits[2] != 10 || cached[2]%10 != 0 || cached[2] < 10*17*16 ||
		!strings.Contains(out, fmt.Sprintf("hits: %d of 20 requests; tokens saved: %d", hits[1]+10, cached[1]+cached[2])) {
		t.Errorf("rounds: %d requests, %d hits, %d cached\n%s", n, hits, cached, out)
	}
	if !strings.Contains(e, "20 requests sent, 20 ok") {
		t.Errorf("stderr: %s", e)
	}
	out, e, code = run(t, nil, bin, "probe", "prefix-cache", "--mode", "shared-system", "--profile", "vllm-rtx5090-fp8", "--no-prefix-cache")
	if code != 1 || !strings.Contains(out, "hits: 0 of 20 requests; tokens saved: 0") || !strings.Contains(out, ": FAIL: 0 of 10 requests after the first round hit") {
		t.Errorf("cache off: exit %d\n%s%s", code, out, e)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "paged"}, `--mode "paged": give repeat or shared-system`},
		{[]string{"--mode", "shared-system", "--repeats", "3"}, "--repeats applies to --mode repeat only"},
		{[]string{"--rounds", "3"}, "--rounds applies to --mode shared-system only"},
		{[]string{"--mode", "shared-system", "--rounds", "1"}, "--rounds is 1: give 2 to 100 rounds"},
		{[]string{"--mode", "shared-system", "--system-tokens", "10"}, "--system-tokens is 10: give 64 to"},
		{[]string{"--mode", "shared-system", "--round-requests", "0"}, "--round-requests 0: give at least 1"},
	} {
		_, e, code := run(t, nil, bin, append([]string{"probe", "prefix-cache"}, c.args...)...)
		if code != 2 || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, e)
		}
	}
}

// TestProbeRunTwice: a server keeps its prefix cache between runs, so the
// probe's prompts are new to each run: run twice against one simulator
// (as against a real server), both PASS, where prompts repeated from the
// first run would make step 1 of the second a HIT and FAIL it; --seed
// repeats a run's prompts on purpose, and then step 1 does HIT. -o keeps
// the requests as a trace (one phase a step), refused over an existing
// file without --force.
func TestProbeRunTwice(t *testing.T) {
	bin := parallelBinary(t)
	url := startSim(t, bin, "--profile", "vllm-rtx5090-bf16") // a profile with a prefix cache
	tr := filepath.Join(t.TempDir(), "probe.trace.zst")
	seed := regexp.MustCompile(`prompts: seed (\d+), new to this run`)
	var seeds []string
	for i, args := range [][]string{{"-o", tr}, {}} {
		out, e, code := run(t, nil, bin, append([]string{"probe", "prefix-cache", "--url", url}, args...)...)
		if code != 0 || !strings.Contains(out, "prefix cache: PASS") {
			t.Errorf("run %d: exit %d\n%s%s", i+1, code, out, e)
		}
		m := seed.FindStringSubmatch(e)
		if m == nil {
			t.Fatalf("run %d does not say its prompts' seed:\n%s", i+1, e)
		}
		seeds = append(seeds, m[1])
	}
	if seeds[0] == seeds[1] {
		t.Errorf("both runs sent the prompts of seed %s", seeds[0])
	}
	out, e, code := run(t, nil, bin, "probe", "prefix-cache", "--url", url, "--seed", seeds[0])
	if code != 1 || !strings.Contains(out, "1 new prompts                    MISS      HIT         FAIL") {
		t.Errorf("--seed %s again: exit %d, want step 1 a HIT (FAIL, exit 1)\n%s%s", seeds[0], code, out, e)
	}
	r, err := trace.Open(tr)
	if err != nil {
		t.Fatalf("-o: %v", err)
	}
	n := 0
	for r.Scan() {
		n++
	}
	if h := r.Header(); len(h.Phases) != 4 || h.Phases[0].Name != "step1" || n != 24 {
		t.Errorf("-o trace: %d phases (%v), %d records; want step1…step4 and 24", len(h.Phases), h.Phases, n)
	}
	r.Close()
	if _, e, code := run(t, nil, bin, "probe", "prefix-cache", "--url", url, "-o", tr); code != 2 || !strings.Contains(e, "--force") {
		t.Errorf("-o over an existing trace: exit %d, want 2 naming --force: %s", code, e)
	}
}
